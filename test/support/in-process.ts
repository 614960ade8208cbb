import inject from 'light-my-request';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { App } from '../../src/app.js';

/**
 * Sends a request to the app without a socket (as Hono's `app.request` does) and answers
 * with a fetch Response, its body decoded as fetch would (br, gzip) while the headers,
 * `content-encoding` and `content-length` included, stay as the app sent them.
 */
export async function requestInProcess(app: App, path: string, init: RequestInit = {}): Promise<Response> {
  const headers = Object.fromEntries(new Headers(init.headers).entries());
  const body =
    init.body === undefined || init.body === null
      ? undefined
      : typeof init.body === 'string'
        ? init.body
        : Buffer.from(await new Response(init.body).arrayBuffer());
  const res = await inject((req, res) => app.listener(req, res), {
    method: (init.method ?? 'GET') as 'GET',
    url: path,
    headers,
    ...(body === undefined ? {} : { payload: body }),
  });
  const out = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) out.append(name, String(v));
  }
  const encoding = out.get('content-encoding');
  const raw = res.rawPayload;
  const decoded = encoding === 'br' ? brotliDecompressSync(raw) : encoding === 'gzip' ? gunzipSync(raw) : raw;
  const bodiless = [101, 204, 205, 304].includes(res.statusCode) || init.method === 'HEAD';
  return new Response(bodiless ? null : new Uint8Array(decoded), { status: res.statusCode, headers: out });
}
