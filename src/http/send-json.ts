import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlib, gzip } from 'node:zlib';
import { appendVary, chooseEncoding, COMPRESSION_THRESHOLD_BYTES, matchesEtag, type Encoding } from './negotiate.js';

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

export interface JsonResponseOptions {
  /** `Cache-Control: private, max-age=N`; omitted means `no-store`. */
  maxAgeSeconds?: number;
}

/**
 * Sends a 200 JSON body with a weak ETag of its bytes (a matching `If-None-Match` gets a
 * bodiless 304), caching headers, and brotli or gzip when the client accepts it and the
 * body is large enough. HEAD gets the same headers and no body.
 */
export async function sendJson(req: IncomingMessage, res: ServerResponse, body: string, options: JsonResponseOptions = {}): Promise<void> {
  const bytes = Buffer.from(body, 'utf8');
  const etag = weakEtagOf(bytes);
  res.setHeader('etag', etag);
  res.setHeader('cache-control', options.maxAgeSeconds === undefined ? 'no-store' : `private, max-age=${options.maxAgeSeconds}`);
  res.setHeader('vary', appendVary(res.getHeader('vary'), 'Accept-Encoding'));
  if (matchesEtag(req.headers['if-none-match'], etag)) {
    res.statusCode = 304;
    res.end();
    return;
  }
  await sendBytes(req, res, bytes);
}

/**
 * Writes a whole 200 JSON body, given whole or in parts, compressed when the client
 * accepts it and it is large enough. Caching headers are the caller's. Parts are written
 * as they are, in one corked write, rather than copied into one buffer: a copy per answer
 * doubled the external memory a busy server churned through and made V8 run a full
 * collection every couple of seconds (docs/performance.md).
 */
export async function sendBytes(req: IncomingMessage, res: ServerResponse, body: Buffer | readonly Buffer[]): Promise<void> {
  const parts = Buffer.isBuffer(body) ? [body] : body;
  const length = parts.reduce((n, part) => n + part.length, 0);
  const encoding = length >= COMPRESSION_THRESHOLD_BYTES ? chooseEncoding(req.headers['accept-encoding']) : undefined;
  const payload = encoding === undefined ? parts : [await compress(Buffer.concat(parts), encoding)];
  res.statusCode = 200;
  res.setHeader('content-type', 'application/json');
  if (encoding !== undefined) res.setHeader('content-encoding', encoding);
  res.setHeader('content-length', encoding === undefined ? length : payload[0]!.length);
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  writeParts(res, payload);
}

/** A whole body given in parts, written as they are in one corked write (no copy into one buffer). */
export function writeParts(res: ServerResponse, parts: readonly Buffer[]): void {
  res.cork();
  for (const part of parts) res.write(part);
  res.end();
  res.uncork();
}

/** A weak ETag of a body's bytes. */
export function weakEtagOf(bytes: Buffer): string {
  return `W/"${createHash('sha1').update(bytes).digest('base64url')}"`;
}

/** Compression levels: an answer's, made for each request, or `once` for a body compressed once and kept (harder, slower). */
const LEVELS = { answer: { gzip: 6, brotli: 4 }, once: { gzip: 9, brotli: 6 } } as const;

/** `bytes` compressed with `encoding`, at the levels for an answer or for a body compressed `once`. */
export function compress(bytes: Buffer, encoding: Encoding, effort: keyof typeof LEVELS = 'answer'): Promise<Buffer> {
  const levels = LEVELS[effort];
  if (encoding === 'gzip') return gzipAsync(bytes, { level: levels.gzip });
  return brotli(bytes, { params: { [zlib.BROTLI_PARAM_QUALITY]: levels.brotli, [zlib.BROTLI_PARAM_SIZE_HINT]: bytes.length } });
}
