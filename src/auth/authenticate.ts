import { ApiError } from '../api/api-error.js';
import { guardUnavailable } from '../api/unavailable.js';
import { API_KEY_HEADER, type KeyIdentity, type KeyVerifier } from './api-keys.js';

/** The challenge every 401 carries, per DECISIONS.md. */
const WWW_AUTHENTICATE = `ApiKey header="${API_KEY_HEADER}"`;

/**
 * The identity of the key in the `x-api-key` header's value(s); throws the 401 ApiError
 * unless it holds exactly one valid key, and the 503 when the key store cannot be asked.
 * Only the header counts: a key in the query string or a cookie is never looked at. A key
 * the verifier knows is answered at once, without a promise (most requests).
 */
export function authenticate(keys: KeyVerifier, header: string | string[] | undefined): KeyIdentity | Promise<KeyIdentity> {
  const key = Array.isArray(header) ? undefined : header;
  const identity = keys.verify(key);
  if (!(identity instanceof Promise)) return accepted(identity, key);
  return guardUnavailable(() => identity).then((found) => accepted(found, key));
}

// Private

function accepted(identity: KeyIdentity | undefined, key: string | undefined): KeyIdentity {
  if (identity !== undefined) return identity;
  const detail = key === undefined || key === '' ? `the ${API_KEY_HEADER} header is missing` : `the ${API_KEY_HEADER} header does not hold a valid key`;
  throw new ApiError('unauthorized', detail, { headers: { 'www-authenticate': WWW_AUTHENTICATE } });
}
