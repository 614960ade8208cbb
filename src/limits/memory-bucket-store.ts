import {
  EPSILON,
  wholeSeconds,
  type RateLimitOutcome,
  type RateLimitPolicy,
  type RateLimitStore,
} from './rate-limiter.js';

/** Bounds of the in-memory store. */
export interface MemoryStoreOptions {
  /** Buckets kept at most; beyond it, full (idle) buckets go first, then the least recently used. */
  maxKeys?: number;
}

export interface MemoryRateLimitStore extends RateLimitStore {
  /** Answers at once: memory needs no round trip. */
  take(key: string, cost: number, now: number, policy: RateLimitPolicy): RateLimitOutcome;
  /** Buckets held now. */
  readonly size: number;
}

/**
 * Buckets in this process's memory, in a Map in least-recently-used order. A bucket that
 * has refilled completely says nothing a fresh one would not, so making room drops those
 * first; memory stays within `maxKeys` buckets whatever the number of keys. Several
 * processes each keep their own buckets: a shared limit needs the Redis store.
 */
export function createMemoryRateLimitStore(options: MemoryStoreOptions = {}): MemoryRateLimitStore {
  const maxKeys = options.maxKeys ?? 10_000;
  const buckets = new Map<string, Bucket>();

  return {
    get size() {
      return buckets.size;
    },
    take(key, cost, now, policy) {
      const perMs = policy.perMinute / 60_000;
      const bucket = buckets.get(key);
      if (bucket === undefined) makeRoom(buckets, maxKeys, now);
      else buckets.delete(key);
      const held =
        bucket === undefined
          ? policy.burst
          : Math.min(policy.burst, bucket.tokens + Math.max(0, now - bucket.updatedAt) * perMs);
      const allowed = held + EPSILON >= cost;
      const tokens = allowed ? Math.max(0, held - cost) : held;
      const fullAt = now + (policy.burst - tokens) / perMs;
      buckets.set(key, { tokens, updatedAt: now, fullAt });
      return {
        allowed,
        remaining: Math.floor(tokens + EPSILON),
        resetSeconds: wholeSeconds((policy.burst - tokens) / perMs),
        retryAfterSeconds: allowed ? 0 : Math.max(1, wholeSeconds((cost - tokens) / perMs)),
      };
    },
  };
}

// Private

interface Bucket {
  tokens: number;
  updatedAt: number;
  /** When the bucket will hold its whole burst again, if left alone. */
  fullAt: number;
}

function makeRoom(buckets: Map<string, Bucket>, maxKeys: number, now: number): void {
  if (buckets.size < maxKeys) return;
  for (const [key, bucket] of buckets) if (bucket.fullAt <= now) buckets.delete(key);
  for (const key of buckets.keys()) {
    if (buckets.size < maxKeys) break;
    buckets.delete(key);
  }
}
