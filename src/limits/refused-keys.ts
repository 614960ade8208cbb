/**
 * A limit on refused keys per client address. A key this process has not seen accepted is
 * looked up in the key store (a round trip on PostgreSQL), so a stream of made-up keys
 * would cost one statement each and take the pool's connections from everyone else. An
 * address that presented more than `perMinute` refused keys in a
 * minute (a bucket of that many units, refilled at that rate) gets a 429 with
 * `Retry-After` instead of a lookup, for any key that would need one, until its bucket
 * holds a unit again. Keys seen accepted (and API_KEYS) need no lookup and pass, so
 * the callers sharing an address (behind one proxy) keep their service.
 *
 * Refusals are counted by an address limit (address-limit.ts: in the rate limit's store, shared through
 * Redis when it is); an address over its limit costs no round trip either.
 */
import { ApiError } from '../api/api-error.js';
import { createAddressLimit, NO_ADDRESS_LIMIT } from './address-limit.js';
import type { RateLimitStore } from './rate-limiter.js';

export interface RefusedKeyLimit {
  /** Throws the 429 ApiError while `address` is over its refused keys. */
  check(address: string): void;
  /** Counts one refused key from `address`. */
  refused(address: string): void;
}

/** No limit (REFUSED_KEYS_PER_MINUTE=0). */
export const NO_REFUSED_KEY_LIMIT: RefusedKeyLimit = { check: NO_ADDRESS_LIMIT.check, refused: () => {} };

export function createRefusedKeyLimit(perMinute: number, store: RateLimitStore, now: () => number): RefusedKeyLimit {
  if (perMinute <= 0) return NO_REFUSED_KEY_LIMIT;
  const refusal = (seconds: number) => tooManyRefused(perMinute, seconds);
  const limit = createAddressLimit({ name: 'refused-keys', perMinute, store, now, refusal });
  return {
    check: limit.check,
    // Through Redis, counted after the 401 has gone: the next request from the address is checked against it.
    refused: (address) => void limit.count(address),
  };
}

// Private

function tooManyRefused(perMinute: number, retryAfterSeconds: number): ApiError {
  const retryAfter = String(retryAfterSeconds);
  return new ApiError(
    'rate-limited',
    `too many refused keys from this address (at most ${perMinute} a minute); ` +
      `keys not seen accepted before are not looked up for ${retryAfter} s`,
    {
      headers: { 'retry-after': retryAfter },
    },
  );
}
