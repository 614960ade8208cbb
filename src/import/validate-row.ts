import type { Catalog, MetricDefinition } from '../catalog/load-catalog.js';
import { isIsoDate } from '../dates.js';
import type { RawRow } from './parse-rows.js';
import { clipped } from '../clipped.js';

/** A record that passed every check, in the form the point table stores. */
export interface NormalizedRow {
  readonly metric: string;
  readonly slug: string;
  /** `YYYY-MM-DD`, a real calendar date. */
  readonly day: string;
  /**
   * The decimal text as written (NDJSON numbers too, see parse-rows), so nothing is rounded on the
   * way in; null removes the day's point.
   */
  readonly value: string | null;
  /** A JSON object as text, or null. */
  readonly extra: string | null;
}

export type RowCheck = { ok: true; row: NormalizedRow } | { ok: false; error: string };

/**
 * Checks one record against the catalog: a known metric, a slug that metric allows
 * (case counts), a real `YYYY-MM-DD` date, a finite decimal value that PostgreSQL's numeric
 * holds (a whole one for an integer metric), and `extra` only on a metric whose catalog
 * entry declares `extraFields`, as a JSON object of those fields alone, each a number or
 * null. A null value (NDJSON) or an empty one (CSV), without extra fields, removes the
 * day's point.
 * The first problem found is returned as a message naming what was expected and what arrived.
 */
export function validateRow(catalog: Catalog, raw: RawRow): RowCheck {
  if (typeof raw.metric !== 'string') return fail(`expected "metric" to be text, found ${describe(raw.metric)}`);
  const metric = catalog.byName.get(raw.metric);
  if (metric === undefined) return fail(`unknown metric "${clipped(raw.metric)}"`);
  if (typeof raw.project !== 'string') return fail(`expected "project" to be text, found ${describe(raw.project)}`);
  if (!slugsOf(metric).has(raw.project)) return fail(unknownSlug(metric, raw.project));
  if (typeof raw.date !== 'string' || !isIsoDate(raw.date)) {
    return fail(`expected "date" to be a real calendar date as YYYY-MM-DD, found ${describe(raw.date)}`);
  }
  if (raw.value === null || raw.value === '') {
    if (raw.extra !== undefined && raw.extra !== null)
      return fail('a row that removes a point (empty value) takes no extra fields');
    return { ok: true, row: { metric: metric.name, slug: raw.project, day: raw.date, value: null, extra: null } };
  }
  const tooLong = typeof raw.value === 'string' ? beyondNumeric(raw.value) : undefined;
  if (tooLong !== undefined) return fail(tooLong);
  const value = decimalText(raw.value);
  if (value === undefined)
    return fail(`expected "value" to be a finite decimal number such as 42 or -0.5, found ${describe(raw.value)}`);
  if (metric.valueKind === 'integer' && !isWholeNumber(value)) {
    return fail(`expected a whole number for the integer metric "${metric.name}", found ${describe(raw.value)}`);
  }
  const extra = extraText(metric, raw.extra);
  if (extra.error !== undefined) return fail(extra.error);
  return { ok: true, row: { metric: metric.name, slug: raw.project, day: raw.date, value, extra: extra.text } };
}

// Private

/** A plain decimal number, optionally with an exponent: no sign on the front but `-`, no `NaN`, no `Infinity`. */
const DECIMAL = /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;
/** PostgreSQL's numeric input refuses exponents beyond this. */
const MAX_EXPONENT = 1000;
/** The most digits PostgreSQL's numeric holds before and after the decimal point. */
const MAX_WHOLE_DIGITS = 131_072;
const MAX_FRACTION_DIGITS = 16_383;
/** Keys every served point has already; an extra field by the same name would shadow them. */
const RESERVED_EXTRA_KEYS = ['date', 'value'];

const slugSets = new WeakMap<MetricDefinition, ReadonlySet<string>>();

function slugsOf(metric: MetricDefinition): ReadonlySet<string> {
  let slugs = slugSets.get(metric);
  if (slugs === undefined) {
    slugs = new Set(metric.projects);
    slugSets.set(metric, slugs);
  }
  return slugs;
}

function unknownSlug(metric: MetricDefinition, slug: string): string {
  const message = `project "${clipped(slug)}" is not allowed for metric "${metric.name}"`;
  const sameLetters = metric.projects.find((s) => s.toLowerCase() === slug.toLowerCase());
  return sameLetters === undefined ? message : `${message} (slugs are case-sensitive: did you mean "${sameLetters}"?)`;
}

/** The value as exact decimal text, or undefined when it is not a finite number PostgreSQL and float8 both accept. */
function decimalText(value: unknown): string | undefined {
  const text =
    typeof value === 'number'
      ? Number.isFinite(value)
        ? String(value)
        : undefined
      : typeof value === 'string'
        ? value
        : undefined;
  if (text === undefined) return undefined;
  const m = DECIMAL.exec(text);
  if (m === null || !Number.isFinite(Number(text))) return undefined;
  return Math.abs(Number(m[3] ?? 0)) <= MAX_EXPONENT ? text : undefined;
}

/**
 * Why a decimal text is more than PostgreSQL's numeric holds, or undefined: a value beyond
 * it would fail the write of the whole file with no line to name. Digits after the point
 * count trailing zeros (PostgreSQL keeps them as the value's scale); digits before it do
 * not count leading ones.
 */
function beyondNumeric(text: string): string | undefined {
  const m = DECIMAL.exec(text);
  if (m === null) return undefined;
  const [, whole = '', fraction = ''] = m;
  const exponent = Number(m[3] ?? 0);
  const digits = whole + fraction;
  const significant = digits.replace(/^0+/, '').length;
  const wholeDigits = significant === 0 ? 0 : Math.max(0, whole.length + exponent - (digits.length - significant));
  const fractionDigits = Math.max(0, fraction.length - exponent);
  const expected = (most: number, where: string, found: number) =>
    `expected "value" to have at most ${most} digits ${where} the decimal point, found ${found}`;
  if (wholeDigits > MAX_WHOLE_DIGITS) return expected(MAX_WHOLE_DIGITS, 'before', wholeDigits);
  if (fractionDigits > MAX_FRACTION_DIGITS) return expected(MAX_FRACTION_DIGITS, 'after', fractionDigits);
  return undefined;
}

/** Exact on the text, so `12345678901234567.5` is not mistaken for a whole number by rounding. */
function isWholeNumber(text: string): boolean {
  const [, whole = '', fraction = '', exponent = '0'] = DECIMAL.exec(text) ?? [];
  const digits = whole + fraction;
  const point = whole.length + Number(exponent);
  return /^0*$/.test(digits.slice(Math.max(point, 0)));
}

function extraText(
  metric: MetricDefinition,
  extra: unknown,
): { text: string | null; error?: undefined } | { error: string } {
  if (extra === undefined || extra === null) return { text: null };
  if (metric.extraFields.length === 0) {
    return { error: `metric "${metric.name}" takes no extra fields, found ${describe(extra)}` };
  }
  if (typeof extra !== 'object' || Array.isArray(extra))
    return { error: `expected "extra" to be a JSON object, found ${describe(extra)}` };
  const reserved = RESERVED_EXTRA_KEYS.filter((key) => Object.hasOwn(extra, key));
  if (reserved.length > 0)
    return {
      error: `"extra" may not hold ${reserved.map((k) => `"${k}"`).join(' or ')}: every point has that field already`,
    };
  // Only the catalog's fields are served: any other key (markup, `__proto__`, a megabyte of
  // them) would reach every reader of the day.
  const unknown = Object.keys(extra).filter((key) => !metric.extraFields.includes(key));
  if (unknown.length > 0) {
    const more = unknown.length > 1 ? ` and ${unknown.length - 1} more` : '';
    const found = `unexpected extra field "${clipped(unknown[0]!)}"${more} for metric "${metric.name}"`;
    return { error: `${found}: expected only ${metric.extraFields.join(', ')}` };
  }
  // The catalog's fields are aggregated like the value (as numbers, in SQL): anything else
  // there would make every interval query over the day fail with a 500, for every reader.
  const record = extra as Record<string, unknown>;
  const notNumbers = metric.extraFields.filter(
    (field) =>
      Object.hasOwn(record, field) &&
      record[field] !== null &&
      !(typeof record[field] === 'number' && Number.isFinite(record[field])),
  );
  if (notNumbers.length > 0) {
    const field = notNumbers[0]!;
    return {
      error:
        `extra field "${field}" of metric "${metric.name}" must be a number (or ` +
        `null), found ${describe(record[field])}`,
    };
  }
  // An integer metric's fields split what its value counts (etf-num-products: spot, futures, leveraged).
  const fractions =
    metric.valueKind === 'integer'
      ? metric.extraFields.filter((field) => typeof record[field] === 'number' && !Number.isInteger(record[field]))
      : [];
  if (fractions.length > 0) {
    const field = fractions[0]!;
    return {
      error:
        `extra field "${field}" of the integer metric "${metric.name}" must be ` +
        `a whole number (or null), found ${describe(record[field])}`,
    };
  }
  return { text: JSON.stringify(extra) };
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') return `"${clipped(value)}"`;
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${clipped(String(value))}`;
}

function fail(error: string): RowCheck {
  return { ok: false, error };
}
