import type { GraphQLResolveInfo } from 'graphql';
import type { DataPoint } from '../series/series-loader.js';
import type { Splices } from './splice.js';

/**
 * Numbers as PostgreSQL wrote them, for answers that graphql resolves field by field. REST
 * and spliced points pass PostgreSQL's numeric text through, but a JavaScript number holds
 * about 17 digits: `0.1234567890123456789` came out as `0.12345678901234568` and
 * `9007199254740993` as `9007199254740992` once `__typename` (or an alias, a fragment) sent
 * the same points through JSON.parse. Where a number's text is not what JavaScript would
 * write for it, the field records the text as a splice at its response path, and the
 * answer holds the text itself.
 */

/** A DataPoint that also keeps the exact text of its value and extra, where a double would change them. */
export interface ExactPoint extends DataPoint {
  exact?: { value?: string; extra?: string };
}

/**
 * The points of PostgreSQL's JSON text, each number that a double would change kept as its
 * text beside the double: such numbers are held as strings while JSON.parse reads the
 * text, then put back. A point without such numbers is what JSON.parse gives.
 */
export function parseExactPoints(json: string): ExactPoint[] {
  const held: string[] = [];
  const parts: string[] = [];
  let copied = 0;
  let looked = 0;
  let inString = false;
  for (const run of json.matchAll(SEVEN_DIGITS)) {
    if (run.index < looked) continue; // a further run of a number already looked at
    const [from, to] = numberAround(json, run.index);
    if (crossesQuotes(json, looked, from)) inString = !inString;
    looked = to;
    const number = json.slice(from, to);
    if (inString || isExact(number)) continue;
    parts.push(json.slice(copied, from), `"\\u0000${held.push(number) - 1}"`);
    copied = to;
  }
  if (held.length === 0) return JSON.parse(json) as DataPoint[];
  parts.push(json.slice(copied));
  const points = JSON.parse(parts.join('')) as DataPoint[];
  for (const point of points) keepHeld(point, held);
  return points;
}

/**
 * `text` (a JSON number) as the double a resolver returns; recorded to be written as it is when the double would
 * change it.
 */
export function exactNumber(splices: Splices, info: GraphQLResolveInfo, text: string): number {
  if (!isExact(text)) splices.add(info, text);
  return Number(text);
}

/** The answer's text at this field is `text` where the point kept one (see {@link ExactPoint}). */
export function keepExact(splices: Splices, info: GraphQLResolveInfo, text: string | undefined): void {
  if (text !== undefined) splices.add(info, text);
}

// Private

/**
 * A run of 7 digits, which every number a double changes has in PostgreSQL's text (numeric
 * text never has an exponent): 16 or more digits have 8 on one side of the point, and a
 * number under 1e-6 (JavaScript writes 1e-7) six zeros and a digit after it. Dates and
 * times have no such run, so only such numbers are looked at: telling every string from
 * every number with one pattern took 8 times as long as JSON.parse (76 series of 3,650
 * points); looking for these runs where there are none adds about a tenth to it.
 */
const SEVEN_DIGITS = /\d{7}/g;

/** The start and end of the JSON number around `at` (digits, a sign, a point, an exponent). */
function numberAround(json: string, at: number): [number, number] {
  let from = at;
  while (from > 0 && NUMBER_CHARS.has(json[from - 1]!)) from--;
  let to = at;
  while (to < json.length && NUMBER_CHARS.has(json[to]!)) to++;
  return [from, to];
}

const NUMBER_CHARS = new Set('0123456789.-+eE');

/** Whether an odd number of string quotes (not escaped ones) stand in `json` from `from` to `to`. */
function crossesQuotes(json: string, from: number, to: number): boolean {
  let odd = false;
  for (let i = json.indexOf('"', from); i !== -1 && i < to; i = json.indexOf('"', i + 1)) {
    let slashes = 0;
    while (json[i - 1 - slashes] === '\\') slashes++;
    if (slashes % 2 === 0) odd = !odd;
  }
  return odd;
}

/** A held number's stand-in: PostgreSQL's text and jsonb cannot hold U+0000, so none of its strings is one. */
const HELD = /"\\u0000(\d+)"/g;

/** Whether JavaScript writes the double of `text` as `text` itself (`12.5`, not `0.1234567890123456789` or `1E3`). */
function isExact(text: string): boolean {
  return String(Number(text)) === text;
}

/** Puts a point's held numbers back: as doubles, and as the exact text of its value and extra. */
function keepHeld(point: ExactPoint, held: readonly string[]): void {
  const value = point.value as unknown;
  const extra = point.extra === null ? undefined : JSON.stringify(point.extra);
  const extraHeld = extra?.includes('"\\u0000') === true;
  if (typeof value !== 'string' && !extraHeld) return;
  point.exact = {};
  if (typeof value === 'string') {
    point.exact.value = held[Number(value.slice(1))]!;
    point.value = Number(point.exact.value);
  }
  if (extraHeld) {
    point.exact.extra = extra!.replace(HELD, (_, i: string) => held[Number(i)]!);
    point.extra = JSON.parse(point.exact.extra) as DataPoint['extra'];
  }
}
