import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AnswerKeeper } from '../cache/answer-keeper.js';
import type { CachedAnswer } from '../cache/response-cache.js';
import { columnBytes } from '../db/store.js';
import type { RawSeriesRow, SeriesRows } from '../series/read-series.js';
import type { SeriesPlan } from '../series/series-plan.js';
import {
  JSON_HEADERS,
  sendWhole,
  streamBody,
  writeValidators,
  type BodyChunk,
  type Validators,
} from '../http/send-json.js';

/**
 * Writes the REST body `{"slug":[points],…}`. The ETag joins the dataset version (bumped
 * by every write) and the request, and Last-Modified is the newest write to the answer's
 * series; both come with the first row, so a matching `If-None-Match` (or a later
 * `If-Modified-Since`) is a 304 without reading the rest. Rows read whole are sent with a
 * length (compressed above the threshold); batches stream chunked (compressed when
 * accepted), so memory stays bounded however large the answer is, and a client that takes
 * none of them for `stalledAfterMs` is given up.
 */
export async function sendSeriesBody(
  req: IncomingMessage,
  res: ServerResponse,
  plan: SeriesPlan,
  answer: SeriesRows,
  maxAgeSeconds: number,
  keeper: AnswerKeeper,
  stalledAfterMs: number,
): Promise<void> {
  if ('whole' in answer) {
    const validators = validatorsOf(plan, answer.whole[0]);
    if (!writeValidators(req, res, { ...validators, maxAgeSeconds })) return;
    const body: Buffer[] = [];
    for (const row of answer.whole) body.push(keyBytes(row, body.length === 0 ? 0 : 1), columnBytes(row.points));
    body.push(body.length === 0 ? EMPTY_OBJECT : CLOSING_BRACE);
    // Joined into one buffer only for the cache, and only when it keeps an answer of this size.
    const length = body.reduce((n, part) => n + part.length, 0);
    if (keeper.keeps(length))
      keeper.keep({ body: Buffer.concat(body, length), contentType: 'application/json', ...validators, cost: 0 });
    await sendWhole(req, res, { headers: JSON_HEADERS, body, compress: true });
    return;
  }
  const iterator = answer.batches[Symbol.asyncIterator]();
  try {
    const first = await iterator.next();
    const rows = first.done ? [] : first.value;
    if (!writeValidators(req, res, { ...validatorsOf(plan, rows[0]), maxAgeSeconds })) return;
    await streamBody(req, res, 'application/json', jsonChunks(chain(rows, iterator)), stalledAfterMs);
  } finally {
    await iterator.return?.();
  }
}

/**
 * Sends a kept answer as it was first sent: the same bytes and validators (a 304 when the client's copy is current).
 */
export async function sendKeptAnswer(
  req: IncomingMessage,
  res: ServerResponse,
  answer: CachedAnswer,
  maxAgeSeconds: number,
): Promise<void> {
  if (!writeValidators(req, res, { etag: answer.etag!, lastModified: answer.lastModified, maxAgeSeconds })) return;
  await sendWhole(req, res, { headers: JSON_HEADERS, body: answer.body, compress: true });
}

// Private

/** The ETag joins the dataset version and the request; Last-Modified is the newest write to the answer's series. */
function validatorsOf(plan: SeriesPlan, first: RawSeriesRow | undefined): Validators {
  return {
    etag: `W/"${first === undefined ? '0' : String(first.version)}-${planHash(plan)}"`,
    lastModified: first?.updatedAt == null ? undefined : parseInstant(String(first.updatedAt)),
  };
}

/** The newest write repeats in every answer until the next write: the last instant parsed is kept. */
let lastInstant = { text: '', ms: Number.NaN };

function parseInstant(text: string): number {
  if (text !== lastInstant.text) lastInstant = { text, ms: Date.parse(text) };
  return lastInstant.ms;
}

async function* chain<T>(first: T, rest: AsyncIterator<T>): AsyncGenerator<T> {
  yield first;
  for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
}

/**
 * `{"slug":[points],…}` in pieces: the points are the database's bytes, passed through.
 * Each batch is emptied once written: its rows' columns are views of the driver's read
 * buffers, which the generators it passes through would otherwise hold while the next is read.
 */
async function* jsonChunks(batches: AsyncIterable<RawSeriesRow[]>): AsyncGenerator<BodyChunk> {
  let separator = '{';
  for await (const batch of batches) {
    for (const row of batch) {
      yield `${separator}${key(row)}`;
      yield row.points;
      separator = ',';
    }
    batch.length = 0;
  }
  yield separator === '{' ? '{}' : '}';
}

/** `"slug":` for a row; slugs are checked catalog values, quoted as JSON all the same. */
function key(row: RawSeriesRow): string {
  return `${JSON.stringify(String(row.slug))}:`;
}

/** The request part of an ETag: a digest of everything the answer depends on but the data. */
function planHash(plan: SeriesPlan): string {
  let hash = PLAN_HASHES.get(plan);
  if (hash === undefined) {
    hash = createHash('sha1')
      .update(`${plan.batchKey}\u0000${plan.projects.map((p) => p.slug).join(',')}`)
      .digest('base64url')
      .slice(0, 22);
    PLAN_HASHES.set(plan, hash);
  }
  return hash;
}

/**
 * Repeated requests bring the same plan (prepared-requests.ts): a digest costs about 10 µs in a busy server, a lookup
 * nothing.
 */
const PLAN_HASHES = new WeakMap<SeriesPlan, string>();

/**
 * `{"slug":` (0) and `,"slug":` (1) as bytes for a row, made once per slug (the catalog's; a safety cap all the
 * same).
 */
function keyBytes(row: RawSeriesRow, separator: 0 | 1): Buffer {
  const slug = String(row.slug);
  let both = KEY_BYTES.get(slug);
  if (both === undefined) {
    const quoted = key(row);
    both = [Buffer.from(`{${quoted}`), Buffer.from(`,${quoted}`)];
    if (KEY_BYTES.size >= 10_000) KEY_BYTES.clear();
    KEY_BYTES.set(slug, both);
  }
  return both[separator];
}

const KEY_BYTES = new Map<string, [Buffer, Buffer]>();
const EMPTY_OBJECT = Buffer.from('{}');
const CLOSING_BRACE = Buffer.from('}');
