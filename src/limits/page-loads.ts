import { ApiError } from '../api/api-error.js';
import { createAddressLimit } from './address-limit.js';
import type { RateLimitStore } from './rate-limiter.js';

/**
 * Loads of a public page and its files per client address: they need no key, so nothing else
 * bounds what one address may download. Every load counts, a 304 included.
 */
export interface PageLoadLimit {
  /** Counts one load from `address`; throws the 429 ApiError (with `Retry-After`) once it is over its limit. */
  take(address: string): Promise<void> | undefined;
}

/** `perMinute` loads an address may make a minute, all at once if it likes; 0: no limit. */
export function createPageLoadLimit(perMinute: number, store: RateLimitStore, now: () => number): PageLoadLimit {
  const refusal = (seconds: number) => tooManyLoads(perMinute, seconds);
  const limit = createAddressLimit({ name: 'page-loads', perMinute, store, now, refusal });
  return {
    take(address) {
      limit.check(address);
      const counted = limit.count(address);
      if (counted === undefined) {
        limit.check(address);
        return undefined;
      }
      return counted.then(() => limit.check(address));
    },
  };
}

// Private

function tooManyLoads(perMinute: number, retryAfterSeconds: number): ApiError {
  const retryAfter = String(retryAfterSeconds);
  const message = `too many page loads from this address (at most ${perMinute} a minute); try again in ${retryAfter} s`;
  return new ApiError('rate-limited', message, { headers: { 'retry-after': retryAfter } });
}
