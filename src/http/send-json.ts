import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlib, gzip } from 'node:zlib';

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/** Below this many bytes compression costs more than it saves. */
export const COMPRESSION_THRESHOLD_BYTES = 1024;

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
  const etag = `W/"${createHash('sha1').update(bytes).digest('base64url')}"`;
  res.setHeader('etag', etag);
  res.setHeader('cache-control', options.maxAgeSeconds === undefined ? 'no-store' : `private, max-age=${options.maxAgeSeconds}`);
  res.setHeader('vary', appendVary(res.getHeader('vary'), 'Accept-Encoding'));
  if (matchesEtag(req.headers['if-none-match'], etag)) {
    res.statusCode = 304;
    res.end();
    return;
  }
  const encoding = bytes.length >= COMPRESSION_THRESHOLD_BYTES ? chooseEncoding(req.headers['accept-encoding']) : undefined;
  const payload = encoding === 'br'
    ? await brotli(bytes, { params: { [zlib.BROTLI_PARAM_QUALITY]: 4, [zlib.BROTLI_PARAM_SIZE_HINT]: bytes.length } })
    : encoding === 'gzip' ? await gzipAsync(bytes, { level: 6 }) : bytes;
  res.statusCode = 200;
  res.setHeader('content-type', 'application/json');
  if (encoding !== undefined) res.setHeader('content-encoding', encoding);
  res.setHeader('content-length', payload.length);
  res.end(req.method === 'HEAD' ? undefined : payload);
}

// Private

function matchesEtag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const opaque = etag.slice(2);
  return header.split(',').some((candidate) => {
    const tag = candidate.trim();
    return tag === '*' || tag === etag || tag === opaque;
  });
}

/** Picks br, then gzip, honouring `q=0`; undefined means send identity. */
function chooseEncoding(header: string | undefined): 'br' | 'gzip' | undefined {
  if (header === undefined) return undefined;
  const accepted = new Map<string, number>();
  for (const part of header.split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    accepted.set(name, q === undefined ? 1 : Number(q.slice(2)) || 0);
  }
  const weight = (name: string) => accepted.get(name) ?? accepted.get('*') ?? 0;
  if (weight('br') > 0) return 'br';
  if (weight('gzip') > 0) return 'gzip';
  return undefined;
}

function appendVary(current: number | string | string[] | undefined, value: string): string {
  const existing = current === undefined ? [] : String(current).split(',').map((v) => v.trim()).filter(Boolean);
  return [...new Set([...existing, value])].join(', ');
}
