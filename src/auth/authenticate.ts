import type { IncomingHttpHeaders } from 'node:http';
import { ApiError } from '../api/api-error.js';
import { guardUnavailable } from '../api/unavailable.js';
import type { KeyIdentity } from '../db/api-key-queries.js';
import { API_KEY_HEADER, type KeyVerifier } from './api-keys.js';
import type { RefusedKeyLimit } from '../limits/refused-keys.js';

/** The challenge every 401 carries, per docs/decisions.md. */
const WWW_AUTHENTICATE = `ApiKey header="${API_KEY_HEADER}"`;
/** The challenge of a route that also takes the key as a bearer token (`/mcp`). */
const WWW_AUTHENTICATE_BEARER = `${WWW_AUTHENTICATE}, Bearer`;

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
  bearer = false,
): KeyIdentity | Promise<KeyIdentity> {
  const key = Array.isArray(header) ? undefined : header;
  const identity = keys.verify(key, () => limit.check(addressOf(client)));
  if (!(identity instanceof Promise)) return accepted(identity, key, limit, client, bearer);
  return guardUnavailable(() => identity).then((found) => accepted(found, key, limit, client, bearer));
}

/**
 * The key a request presents where bearer tokens are taken too: the `x-api-key` header's
 * value(s) when it is sent, else the token of `Authorization: Bearer <key>` (the scheme in any
 * case, as RFC 9110 has it); undefined when neither is there. MCP clients send bearer tokens.
 */
export function presentedKey(headers: IncomingHttpHeaders): string | string[] | undefined {
  const header = headers[API_KEY_HEADER];
  if (header !== undefined) return header;
  const match = /^bearer +(\S+) *$/i.exec(headers.authorization ?? '');
  return match === null ? (headers.authorization === undefined ? undefined : '') : match[1];
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
  bearer: boolean,
): KeyIdentity {
  if (identity !== undefined) return identity;
  // A missing header costs no lookup and is what a first try looks like: not counted.
  if (key !== undefined && key !== '') limit.refused(addressOf(client));
  const where = bearer ? `${API_KEY_HEADER} header (or Authorization: Bearer)` : `${API_KEY_HEADER} header`;
  const detail = key === undefined || key === '' ? `the ${where} is missing` : `the ${where} does not hold a valid key`;
  const challenge = bearer ? WWW_AUTHENTICATE_BEARER : WWW_AUTHENTICATE;
  throw new ApiError('unauthorized', detail, { headers: { 'www-authenticate': challenge } });
}

/** A socket already closed has no address: such requests share one allowance. */
function addressOf(client: Client): string {
  return client.remoteAddress ?? 'unknown';
}
