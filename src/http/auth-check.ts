import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../api/api-error.js';
import { API_KEY_HEADER, type KeyIdentity } from '../auth/api-keys.js';
import { guardUnavailable } from '../api/unavailable.js';
import type { Services } from '../services.js';
import type { RateLimitMeter } from './rate-limit.js';

/** The challenge every 401 carries, per DECISIONS.md. */
export const WWW_AUTHENTICATE = `ApiKey header="${API_KEY_HEADER}"`;

/**
 * The identity of the key in the `x-api-key` header; throws a 401 ApiError unless it holds
 * a valid key. Only the header counts: a key in the query string or a cookie is ignored.
 * Runs before anything else of the request is parsed.
 */
export async function requireApiKey(services: Services, req: IncomingMessage): Promise<KeyIdentity> {
  const header = req.headers[API_KEY_HEADER];
  const key = Array.isArray(header) ? undefined : header;
  const identity = await guardUnavailable(() => services.keys.verify(key));
  if (identity === undefined) {
    const detail = key === undefined || key === '' ? `the ${API_KEY_HEADER} header is missing` : `the ${API_KEY_HEADER} header does not hold a valid key`;
    throw new ApiError('unauthorized', detail, { headers: { 'www-authenticate': WWW_AUTHENTICATE } });
  }
  return identity;
}

/**
 * The gate of every keyed request: a valid key (401 otherwise, which costs nothing), then
 * one unit of that key's rate limit (429 otherwise). The returned meter charges the rest
 * of the request's cost; every charge writes the current `RateLimit` fields onto `res`.
 */
export async function admitRequest(services: Services, req: IncomingMessage, res: ServerResponse): Promise<RateLimitMeter> {
  const caller = await requireApiKey(services, req);
  return services.rateLimiter.open(caller, (headers) => {
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  });
}
