import type { ApiError } from '../api/api-error.js';
import type { RateLimitOutcome, RateLimitPolicy, RateLimitStore } from './rate-limiter.js';

/**
 * A bucket of `perMinute` units per client address, refilled at that rate, counted in the
 * rate limit's store (shared through Redis when it is) under keys of its own. Whether an
 * address is over its limit is remembered in this process once a count says so, until a
 * unit has refilled: an address over its limit costs no round trip.
 */
export interface AddressLimit {
  /** Throws the limit's 429 ApiError while `address` is known to be over its limit. */
  check(address: string): void;
  /**
   * Counts one unit from `address`; settles once counted (at once in memory), and an address
   * found over its limit is refused by `check` from then on. Never rejects: a store that cannot
   * count falls back by itself.
   */
  count(address: string): Promise<void> | undefined;
}

/** No limit (a limit of 0 a minute). */
export const NO_ADDRESS_LIMIT: AddressLimit = { check: () => {}, count: () => undefined };

export interface AddressLimitOptions {
  /** What the store's keys start with, e.g. `refused-keys`. */
  name: string;
  /** Units an address may spend a minute (and at once); 0 or less: no limit. */
  perMinute: number;
  store: RateLimitStore;
  /** Milliseconds since the epoch. */
  now: () => number;
  /** The 429 for an address over its limit, which may retry in `retryAfterSeconds`. */
  refusal(retryAfterSeconds: number): ApiError;
}

export function createAddressLimit({ name, perMinute, store, now, refusal }: AddressLimitOptions): AddressLimit {
  if (perMinute <= 0) return NO_ADDRESS_LIMIT;
  const policy: RateLimitPolicy = { perMinute, burst: perMinute };
  /** Addresses over their limit, and until when (ms since the epoch). */
  const blocked = new Map<string, number>();
  const counted = (address: string, { allowed, retryAfterSeconds }: RateLimitOutcome) => {
    if (allowed) return;
    if (blocked.size >= MAX_BLOCKED) blocked.clear();
    blocked.set(address, now() + retryAfterSeconds * 1000);
  };
  return {
    check(address) {
      const until = blocked.get(address);
      if (until === undefined) return;
      const left = until - now();
      if (left <= 0) blocked.delete(address);
      else throw refusal(Math.ceil(left / 1000));
    },
    count(address) {
      const outcome = store.take(`${name}:${address}`, 1, now(), policy);
      if (!(outcome instanceof Promise)) {
        counted(address, outcome);
        return undefined;
      }
      return outcome.then(
        (known) => counted(address, known),
        () => {},
      );
    },
  };
}

// Private

/** Addresses remembered as over their limit at most; a flood of addresses empties the list rather than grow it. */
const MAX_BLOCKED = 10_000;
