import type { IncomingMessage } from 'node:http';
import { ApiError } from '../api/api-error.js';
import { API_KEY_HEADER } from '../auth/api-keys.js';
import { guardUnavailable } from '../api/unavailable.js';
import type { Services } from '../services.js';

/** The challenge every 401 carries, per DECISIONS.md. */
export const WWW_AUTHENTICATE = `ApiKey header="${API_KEY_HEADER}"`;

/**
 * Throws a 401 ApiError unless the `x-api-key` header holds a valid key. Only the header
 * counts: a key in the query string or a cookie is ignored. Runs before anything else
 * of the request is parsed.
 */
export async function requireApiKey(services: Services, req: IncomingMessage): Promise<void> {
  const header = req.headers[API_KEY_HEADER];
  const key = Array.isArray(header) ? undefined : header;
  const valid = await guardUnavailable(() => services.keys.verify(key));
  if (!valid) {
    const detail = key === undefined || key === '' ? `the ${API_KEY_HEADER} header is missing` : `the ${API_KEY_HEADER} header does not hold a valid key`;
    throw new ApiError('unauthorized', detail, { headers: { 'www-authenticate': WWW_AUTHENTICATE } });
  }
}
