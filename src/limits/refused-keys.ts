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
 * Refusals are counted in the rate limit's store (shared through Redis when it is), under
 * keys of their own; whether an address is over its limit is remembered in this process
 * once a count says so, so an address over its limit costs no round trip either.
 */
import { ApiError } from '../api/api-error.js';
import type { RateLimitOutcome, RateLimitPolicy, RateLimitStore } from './rate-limiter.js';

export interface RefusedKeyLimit {
  /** Throws the 429 ApiError while `address` is over its refused keys. */
  check(address: string): void;
  /** Counts one refused key from `address`. */
  refused(address: string): void;
}

/** No limit (REFUSED_KEYS_PER_MINUTE=0). */
export const NO_REFUSED_KEY_LIMIT: RefusedKeyLimit = { check: () => {}, refused: () => {} };

export function createRefusedKeyLimit(perMinute: number, store: RateLimitStore, now: () => number): RefusedKeyLimit {
  if (perMinute <= 0) return NO_REFUSED_KEY_LIMIT;
  const policy: RateLimitPolicy = { perMinute, burst: perMinute };
  /** Addresses over their limit, and until when (ms since the epoch). */
  const blocked = new Map<string, number>();
  const block = (address: string, retryAfterSeconds: number) => {
    if (blocked.size >= MAX_BLOCKED) blocked.clear();
    blocked.set(address, now() + retryAfterSeconds * 1000);
  };
  return {
    check(address) {
      const until = blocked.get(address);
      if (until === undefined) return;
      const left = until - now();
      if (left <= 0) blocked.delete(address);
      else throw tooManyRefused(perMinute, Math.ceil(left / 1000));
    },
    refused(address) {
      const outcome = store.take(`refused-keys:${address}`, 1, now(), policy);
      const counted = ({ allowed, retryAfterSeconds }: RateLimitOutcome) => {
        if (!allowed) block(address, retryAfterSeconds);
      };
      // Through Redis, counted after the 401 has gone: the next request from the address is checked against it.
      // A store that cannot count (Redis down) falls back by itself; nothing more to do here.
      if (outcome instanceof Promise) outcome.then(counted, () => {});
      else counted(outcome);
    },
  };
}

// Private

/** Addresses remembered as over their limit at most; a flood of addresses empties the list rather than grow it. */
const MAX_BLOCKED = 10_000;

function tooManyRefused(perMinute: number, retryAfterSeconds: number): ApiError {
  const retryAfter = String(retryAfterSeconds);
  return new ApiError('rate-limited', `too many refused keys from this address (at most ${perMinute} a minute); keys not seen accepted before are not looked up for ${retryAfter} s`, {
    headers: { 'retry-after': retryAfter },
  });
}
