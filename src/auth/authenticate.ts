import { ApiError } from '../api/api-error.js';
import { guardUnavailable } from '../api/unavailable.js';
import type { KeyIdentity } from '../db/api-key-queries.js';
import { API_KEY_HEADER, type KeyVerifier } from './api-keys.js';
import type { RefusedKeyLimit } from '../limits/refused-keys.js';

/** The challenge every 401 carries, per docs/decisions.md. */
const WWW_AUTHENTICATE = `ApiKey header="${API_KEY_HEADER}"`;

/**
 * The identity of the key in the `x-api-key` header's value(s); throws the 401 ApiError
 * unless it holds exactly one valid key, and the 503 when the key store cannot be asked.
 * Only the header counts: a key in the query string or a cookie is never looked at. A key
 * the verifier knows is answered at once, without a promise (most requests). A key
 * refused counts against the client's address, and one over its refused keys gets the 429
 * of `limit` for a key not seen accepted before, without a lookup (refused-keys.ts).
 */
export function authenticate(
  keys: KeyVerifier,
  header: string | string[] | undefined,
  limit: RefusedKeyLimit,
  client: Client,
): KeyIdentity | Promise<KeyIdentity> {
  const key = Array.isArray(header) ? undefined : header;
  const identity = keys.verify(key, () => limit.check(addressOf(client)));
  if (!(identity instanceof Promise)) return accepted(identity, key, limit, client);
  return guardUnavailable(() => identity).then((found) => accepted(found, key, limit, client));
}

/** Where a request came from: its socket (the address is read only when a key is refused or looked up). */
export interface Client {
  readonly remoteAddress?: string | undefined;
}

// Private

function accepted(
  identity: KeyIdentity | undefined,
  key: string | undefined,
  limit: RefusedKeyLimit,
  client: Client,
): KeyIdentity {
  if (identity !== undefined) return identity;
  // A missing header costs no lookup and is what a first try looks like: not counted.
  if (key !== undefined && key !== '') limit.refused(addressOf(client));
  const detail =
    key === undefined || key === ''
      ? `the ${API_KEY_HEADER} header is missing`
      : `the ${API_KEY_HEADER} header does not hold a valid key`;
  throw new ApiError('unauthorized', detail, { headers: { 'www-authenticate': WWW_AUTHENTICATE } });
}

/** A socket already closed has no address: such requests share one allowance. */
function addressOf(client: Client): string {
  return client.remoteAddress ?? 'unknown';
}
