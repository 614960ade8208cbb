import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../api/api-error.js';
import type { ClientGone } from './client-gone.js';

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

/**
 * Copies a fetch-API Response (status, headers, body) onto a node response: whole, with
 * its length, or, for an event stream (a subscription), event by event as it is written,
 * until it ends or the client leaves (`signal`).
 */
export async function sendFetchResponse(res: ServerResponse, response: Response, head: boolean, signal?: ClientGone): Promise<void> {
  if (response.body !== null && !head && (response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    copyStatusAndHeaders(res, response);
    res.flushHeaders();
    const reader = response.body.getReader();
    const onAbort = () => void reader.cancel().catch(() => {});
    signal?.addEventListener('abort', onAbort);
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (!res.write(value)) await once(res, 'drain', { signal: signal?.abortSignal });
      }
    } catch (error) {
      if (!signal?.aborted) throw error; // the client left: nothing more to send
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
    res.end();
    return;
  }
  sendResponseWithBody(res, response, Buffer.from(await response.arrayBuffer()), head);
}

/** A fetch-API Response's status and headers onto a node response, with `body` in place of the Response's own. */
function sendResponseWithBody(res: ServerResponse, response: Response, body: Buffer, head: boolean): void {
  copyStatusAndHeaders(res, response);
  res.setHeader('content-length', body.length);
  res.end(head ? undefined : body);
}

// Private

function copyStatusAndHeaders(res: ServerResponse, response: Response): void {
  res.statusCode = response.status;
  response.headers.forEach((value, name) => {
    if (name !== 'content-length') res.setHeader(name, value);
  });
}

function tooLarge(limit: number): ApiError {
  return new ApiError('payload-too-large', `request bodies are limited to ${limit} bytes`);
}
