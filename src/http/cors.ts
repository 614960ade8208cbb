import type { IncomingMessage, ServerResponse } from 'node:http';
import { API_KEY_HEADER } from '../auth/api-keys.js';

/**
 * Adds CORS headers for an allowed `Origin` (exact match against `CORS_ORIGINS`; no
 * reflection of other origins). Returns true when the request was a preflight and has
 * been answered.
 */
export function applyCors(allowed: readonly string[], req: IncomingMessage, res: ServerResponse): boolean {
  const origin = req.headers.origin;
  if (allowed.length > 0) res.setHeader('vary', 'Origin');
  if (origin === undefined || !allowed.includes(origin)) return false;
  res.setHeader('access-control-allow-origin', origin);
  res.setHeader('access-control-expose-headers', 'ETag, Retry-After, RateLimit, RateLimit-Policy, X-Request-Id');
  const isPreflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
  if (!isPreflight) return false;
  res.statusCode = 204;
  res.setHeader('access-control-allow-methods', 'GET, HEAD, POST');
  res.setHeader('access-control-allow-headers', `${API_KEY_HEADER}, content-type, if-none-match, if-modified-since`);
  res.setHeader('access-control-max-age', '600');
  res.end();
  return true;
}
