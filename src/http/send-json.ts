import { createHash } from 'node:crypto';
import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlib, createBrotliCompress, createGzip, gzip } from 'node:zlib';
import type { ClientGone } from './client-gone.js';
import {
  appendVary,
  chooseEncoding,
  COMPRESSION_THRESHOLD_BYTES,
  isNotModified,
  matchesEtag,
  type Encoding,
} from './negotiate.js';

/*
 * Every answer but an error is written here, in one of four shapes: whole, with its length
 * ({@link sendWhole}, {@link sendJson}); a body kept and sent many times, such as a page or a
 * static file ({@link sendKept}); streamed, chunked ({@link streamBody}); or an event stream
 * ({@link sendEvents}). Validators ({@link writeValidators}) are written first. Errors are
 * rendered by render-error.ts.
 */

/** A whole answer: its bytes, given whole or in parts, and what goes with them. */
export interface WholeAnswer {
  /** 200 when omitted. */
  status?: number;
  /** Its headers but length and encoding, in the order they are sent; `content-type` among them. */
  headers: readonly (readonly [string, string])[];
  body: Buffer | readonly Buffer[];
  /** brotli or gzip when the client accepts it and the body is large enough. */
  compress: boolean;
}

/** What a client's copy is checked against, and how long it may keep one. */
export interface Validators {
  etag: string;
  /** Milliseconds: sent as Last-Modified and compared with If-Modified-Since. */
  lastModified?: number | undefined;
  /** `Cache-Control: private, max-age=N`; omitted means `no-store`. */
  maxAgeSeconds?: number | undefined;
}

/** A piece of a streamed body: text, or bytes passed through as they came from the database. */
export type BodyChunk = string | Uint8Array;

export const JSON_HEADERS = [['content-type', 'application/json']] as const;

/** Whether `res` was cut off by {@link streamBody} because its client took nothing for the stall limit. */
export function wasGivenUp(res: ServerResponse): boolean {
  return GIVEN_UP.has(res);
}

/** A 200 JSON body with a weak ETag of its bytes, compressed when accepted; see {@link writeValidators}. */
export async function sendJson(
  req: IncomingMessage,
  res: ServerResponse,
  body: string,
  options: { maxAgeSeconds?: number } = {},
): Promise<void> {
  const bytes = Buffer.from(body, 'utf8');
  if (!writeValidators(req, res, { etag: weakEtagOf(bytes), maxAgeSeconds: options.maxAgeSeconds })) return;
  await sendWhole(req, res, { headers: JSON_HEADERS, body: bytes, compress: true });
}

/**
 * ETag, Last-Modified and caching headers; false, after a bodiless 304, when the client's
 * copy is current (`If-None-Match`, or else `If-Modified-Since`).
 */
export function writeValidators(
  req: IncomingMessage,
  res: ServerResponse,
  { etag, lastModified, maxAgeSeconds }: Validators,
): boolean {
  res.setHeader('etag', etag);
  if (lastModified !== undefined) res.setHeader('last-modified', httpDate(lastModified));
  res.setHeader('cache-control', maxAgeSeconds === undefined ? 'no-store' : `private, max-age=${maxAgeSeconds}`);
  res.setHeader('vary', appendVary(res.getHeader('vary'), 'Accept-Encoding'));
  if (!isNotModified(req.headers, etag, lastModified)) return true;
  res.statusCode = 304;
  res.end();
  return false;
}

/**
 * Writes a whole answer with its length; HEAD gets the headers alone. Parts are written as
 * they are, in one corked write, rather than copied into one buffer: a copy per answer
 * doubled the external memory a busy server churned through.
 */
export async function sendWhole(req: IncomingMessage, res: ServerResponse, answer: WholeAnswer): Promise<void> {
  const parts = Buffer.isBuffer(answer.body) ? [answer.body] : (answer.body as readonly Buffer[]);
  const length = parts.reduce((n, part) => n + part.length, 0);
  const encoding =
    answer.compress && length >= COMPRESSION_THRESHOLD_BYTES
      ? chooseEncoding(req.headers['accept-encoding'])
      : undefined;
  const payload = encoding === undefined ? parts : [await compress(Buffer.concat(parts, length), encoding)];
  res.statusCode = answer.status ?? 200;
  for (const [name, value] of answer.headers) res.setHeader(name, value);
  if (encoding !== undefined) res.setHeader('content-encoding', encoding);
  res.setHeader('content-length', encoding === undefined ? length : payload[0]!.length);
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  res.cork();
  for (const part of payload) res.write(part);
  res.end();
  res.uncork();
}

/** A body sent many times unchanged (a page, a static file): its validator, and its compressed forms once made. */
export interface KeptBody {
  readonly plain: Buffer;
  readonly etag: string;
  /** Each encoding made once, when first asked for, and kept. */
  readonly compressed: Map<Encoding, Promise<Buffer>>;
}

/** Keeps `plain`, with a weak ETag of its bytes unless `etag` is given. */
export function keepBody(plain: Buffer, etag: string = weakEtagOf(plain)): KeptBody {
  return { plain, etag, compressed: new Map() };
}

/**
 * Sends a kept body with status 200, or a bodiless 304 when `If-None-Match` names its ETag;
 * brotli or gzip when the client accepts it, compressed harder than an answer, once, in
 * Node's thread pool. Content-Type and Cache-Control are the caller's. HEAD gets no body.
 */
export async function sendKept(req: IncomingMessage, res: ServerResponse, kept: KeptBody): Promise<void> {
  res.setHeader('etag', kept.etag);
  res.setHeader('vary', appendVary(res.getHeader('vary'), 'Accept-Encoding'));
  if (matchesEtag(req.headers['if-none-match'], kept.etag)) {
    res.statusCode = 304;
    res.end();
    return;
  }
  const worth = kept.plain.length >= COMPRESSION_THRESHOLD_BYTES;
  const encoding = worth ? chooseEncoding(req.headers['accept-encoding']) : undefined;
  let body = kept.plain;
  if (encoding !== undefined) {
    let compressed = kept.compressed.get(encoding);
    if (compressed === undefined) {
      compressed = compress(kept.plain, encoding, 'once');
      kept.compressed.set(encoding, compressed);
    }
    body = await compressed;
    res.setHeader('content-encoding', encoding);
  }
  res.statusCode = 200;
  res.setHeader('content-length', body.length);
  res.end(req.method === 'HEAD' ? undefined : body);
}

/**
 * Writes a 200 body of unknown length as it is produced, chunked, compressed when the client
 * accepts it, waiting for the socket to drain so memory stays bounded however long the body
 * is. HEAD gets the headers alone. When the client leaves, or takes nothing for
 * `stalledAfterMs` (it is then given up: {@link wasGivenUp}), it stops reading `chunks`
 * (which closes their source, and gives back its database connection) and resolves quietly.
 */
export async function streamBody(
  req: IncomingMessage,
  res: ServerResponse,
  contentType: string,
  chunks: AsyncIterable<BodyChunk>,
  stalledAfterMs: number,
): Promise<void> {
  const encoding = chooseEncoding(req.headers['accept-encoding']);
  res.statusCode = 200;
  res.setHeader('content-type', contentType);
  if (encoding !== undefined) res.setHeader('content-encoding', encoding);
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  const compressor =
    encoding === 'br'
      ? createBrotliCompress({ params: { [zlib.BROTLI_PARAM_QUALITY]: 4 } })
      : encoding === 'gzip'
        ? createGzip({ level: 6 })
        : undefined;
  const sink: NodeJS.WritableStream = compressor ?? res;
  compressor?.pipe(res);

  // A client may have left before the first chunk: its 'close' has fired already, and
  // waiting for it would wait for a drain that never comes, keeping the source open for good.
  const gone = new AbortController();
  if (res.destroyed) gone.abort();
  else res.once('close', () => gone.abort());
  try {
    for await (const chunk of chunks) {
      if (!sink.write(chunk)) await drained(sink, res, gone.signal, stalledAfterMs);
    }
    sink.end();
  } catch (error) {
    if (gone.signal.aborted) return; // the client left: stop reading, nothing to answer
    throw error;
  }
  // 'finish' never comes to a response whose client left after its last chunk; 'close' does.
  if (res.writableFinished || res.destroyed) return;
  await new Promise<void>((resolve) => {
    res.once('finish', resolve);
    res.once('close', resolve);
  });
}

/** Copies an event stream's status, headers and events as they come, until it ends or the client leaves. */
export async function sendEvents(res: ServerResponse, events: Response, signal: ClientGone): Promise<void> {
  res.statusCode = events.status;
  events.headers.forEach((value, name) => {
    if (name !== 'content-length') res.setHeader(name, value);
  });
  res.flushHeaders();
  const reader = events.body!.getReader();
  const onAbort = () => void reader.cancel().catch(() => {});
  signal.addEventListener('abort', onAbort);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) await once(res, 'drain', { signal: signal.abortSignal });
    }
  } catch (error) {
    if (!signal.aborted) throw error; // the client left: nothing more to send
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
  res.end();
}

/** A weak ETag of a body's bytes. */
export function weakEtagOf(bytes: Buffer): string {
  return `W/"${createHash('sha1').update(bytes).digest('base64url')}"`;
}

/** `bytes` compressed with `encoding`, at the levels for an answer or for a body compressed `once` and kept. */
export function compress(bytes: Buffer, encoding: Encoding, effort: keyof typeof LEVELS = 'answer'): Promise<Buffer> {
  const levels = LEVELS[effort];
  if (encoding === 'gzip') return gzipAsync(bytes, { level: levels.gzip });
  return brotli(bytes, {
    params: { [zlib.BROTLI_PARAM_QUALITY]: levels.brotli, [zlib.BROTLI_PARAM_SIZE_HINT]: bytes.length },
  });
}

// Private

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/** Compression levels: an answer's, made for each request, or `once` for a body kept compressed (harder, slower). */
const LEVELS = { answer: { gzip: 6, brotli: 4 }, once: { gzip: 9, brotli: 6 } } as const;

/** The last HTTP date written: the newest write repeats in every answer until the next write. */
let lastHttpDate = { ms: Number.NaN, text: '' };

function httpDate(ms: number): string {
  if (ms !== lastHttpDate.ms) lastHttpDate = { ms, text: new Date(ms).toUTCString() };
  return lastHttpDate.text;
}

/** Responses whose clients were given up for not reading (see {@link wasGivenUp}). */
const GIVEN_UP = new WeakSet<ServerResponse>();

/**
 * Waits for `sink` to drain; a client that takes nothing for `ms` has its connection closed, which ends the wait as
 * its leaving does.
 */
async function drained(sink: NodeJS.WritableStream, res: ServerResponse, gone: AbortSignal, ms: number): Promise<void> {
  const stalled = setTimeout(() => {
    GIVEN_UP.add(res);
    res.destroy();
  }, ms);
  try {
    await once(sink, 'drain', { signal: gone });
  } finally {
    clearTimeout(stalled);
  }
}
