import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ColumnText } from '../db/store.js';
import type { RawSeriesRow } from '../series/read-series.js';
import type { SeriesPlan } from '../series/series-plan.js';
import { appendVary, isNotModified } from '../http/negotiate.js';
import { sendBytes } from '../http/send-json.js';
import { streamBody, type BodyChunk } from '../http/stream-body.js';

/**
 * Writes the REST body `{"slug":[points],…}` from rows that arrive a few projects at a
 * time. The ETag joins the dataset version (bumped by every write) and the request, and
 * Last-Modified is the newest write to the answer's series; both come with the first row,
 * so a matching `If-None-Match` (or a later `If-Modified-Since`) is a 304 without reading
 * the rest. A body that arrives in one batch is sent whole, with a length and
 * compression above the threshold; a longer one streams chunked (compressed when
 * accepted), so memory stays bounded however large it is.
 */
export async function sendSeriesBody(
  req: IncomingMessage,
  res: ServerResponse,
  plan: SeriesPlan,
  batches: AsyncIterable<RawSeriesRow[]>,
  maxAgeSeconds: number,
): Promise<void> {
  const iterator = batches[Symbol.asyncIterator]();
  try {
    const first = await iterator.next();
    const rows = first.done ? [] : first.value;
    const etag = `W/"${rows[0] === undefined ? '0' : String(rows[0].version)}-${planHash(plan)}"`;
    const lastModified = rows[0]?.updatedAt == null ? undefined : Date.parse(String(rows[0].updatedAt));
    res.setHeader('etag', etag);
    if (lastModified !== undefined) res.setHeader('last-modified', new Date(lastModified).toUTCString());
    res.setHeader('cache-control', `private, max-age=${maxAgeSeconds}`);
    res.setHeader('vary', appendVary(res.getHeader('vary'), 'Accept-Encoding'));
    if (isNotModified(req.headers, etag, lastModified)) {
      res.statusCode = 304;
      res.end();
      return;
    }
    const second = first.done ? first : await iterator.next();
    if (second.done) {
      const parts = rows.flatMap((row, i) => [Buffer.from(`${i === 0 ? '{' : ','}${key(row)}`), bytes(row.points)]);
      await sendBytes(req, res, Buffer.concat([...(parts.length === 0 ? [Buffer.from('{')] : parts), Buffer.from('}')]));
      return;
    }
    await streamBody(req, res, 'application/json', jsonChunks(chain(rows, second.value, iterator)));
  } finally {
    await iterator.return?.();
  }
}

// Private

async function* chain<T>(first: T, second: T, rest: AsyncIterator<T>): AsyncGenerator<T> {
  yield first;
  yield second;
  for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
}

/** `{"slug":[points],…}` in pieces: the points are the database's bytes, passed through. */
async function* jsonChunks(batches: AsyncIterable<RawSeriesRow[]>): AsyncGenerator<BodyChunk> {
  let separator = '{';
  for await (const batch of batches) {
    for (const row of batch) {
      yield `${separator}${key(row)}`;
      yield row.points;
      separator = ',';
    }
  }
  yield separator === '{' ? '{}' : '}';
}

/** `"slug":` for a row; slugs are checked catalog values, quoted as JSON all the same. */
function key(row: RawSeriesRow): string {
  return `${JSON.stringify(String(row.slug))}:`;
}

function bytes(value: ColumnText): Buffer {
  return typeof value === 'string' ? Buffer.from(value, 'utf8') : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}

function planHash(plan: SeriesPlan): string {
  const key = `${plan.batchKey}\u0000${plan.projects.map((p) => p.slug).join(',')}`;
  return createHash('sha1').update(key).digest('base64url').slice(0, 22);
}
