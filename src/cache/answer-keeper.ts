import { ApiError } from '../api/api-error.js';
import type { RateLimitMeter } from '../limits/rate-limiter.js';
import type { CachedAnswer, ResponseCache } from './response-cache.js';

/**
 * One request's use of the response cache, the same for REST and GraphQL: a kept answer
 * is given once the key has paid what making it cost; a fresh answer is kept only when no
 * write was announced since the lookup, since a read begun before a write's invalidation
 * arrived may hold the data from before that write.
 */
export interface AnswerKeeper {
  /** The kept answer, paid for; undefined: answer afresh. */
  readonly kept: CachedAnswer | undefined;
  /** Whether a fresh answer of `bytes` would be kept: none need be assembled for the cache otherwise. */
  keeps(bytes: number): boolean;
  /** Keeps a fresh answer, unless a write was announced since the lookup. */
  keep(answer: CachedAnswer): void;
}

/**
 * Looks `key` up (undefined: this request's answer is never kept) and charges a kept
 * answer's cost to `meter`. When the key cannot pay, the request is answered afresh, so
 * its refusal is the one it would get uncached. Call before the store is read.
 */
export async function lookUpAnswer(
  cache: ResponseCache,
  key: string | undefined,
  meter: Pick<RateLimitMeter, 'charge'>,
): Promise<AnswerKeeper> {
  if (key === undefined) return NOTHING_KEPT;
  const kept = cache.get(key);
  if (kept !== undefined && (await covered(meter, kept.cost))) return { kept, keeps: () => false, keep: () => {} };
  const ticket = cache.ticket();
  return {
    kept: undefined,
    keeps: (bytes) => cache.keeps(key, bytes),
    keep: (answer) => cache.set(key, answer, ticket),
  };
}

/** The meter, adding up what is charged to it: a kept answer charges the same again. */
export function countCharges(meter: RateLimitMeter): RateLimitMeter & { readonly total: number } {
  const counting = {
    total: 0,
    charge: async (cost: number) => {
      counting.total += cost;
      await meter.charge(cost);
    },
    get units() {
      return meter.units;
    },
    quote: () => meter.quote(),
  };
  return counting;
}

// Private

const NOTHING_KEPT: AnswerKeeper = { kept: undefined, keeps: () => false, keep: () => {} };

async function covered(meter: Pick<RateLimitMeter, 'charge'>, cost: number): Promise<boolean> {
  try {
    if (cost > 0) await meter.charge(cost);
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.kind === 'rate-limited') return false;
    throw error;
  }
}
