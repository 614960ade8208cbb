import type { IncomingMessage } from 'node:http';
import { ApiError } from '../api/api-error.js';

/** GraphQL documents and variables above this size are refused with 413. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** Reads a request body, refusing with 413 as soon as it exceeds `limit` bytes. */
export async function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** The fetch-API Request for a node request whose body was already read. */
export function toFetchRequest(req: IncomingMessage, body: Buffer): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  const url = new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  return new Request(url, { method: req.method, headers, body: hasBody ? new Uint8Array(body) : undefined });
}

// Private

function tooLarge(limit: number): ApiError {
  return new ApiError('payload-too-large', `request bodies are limited to ${limit} bytes`);
}
