import type { IncomingMessage, ServerResponse } from 'node:http';
import { appendVary, chooseEncoding, COMPRESSION_THRESHOLD_BYTES, matchesEtag, type Encoding } from './negotiate.js';
import { compress, weakEtagOf } from './send-json.js';

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
