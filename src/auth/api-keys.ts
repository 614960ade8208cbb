import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { isActiveKeyHash } from '../db/api-key-queries.js';
import type { Queryable } from '../db/store.js';

/** The request header that carries the key; the only place a key counts. */
export const API_KEY_HEADER = 'x-api-key';

/** How long a lookup result is trusted: a revoked key stops working within this time. */
export const KEY_CACHE_MS = 5_000;
const KEY_CACHE_MAX_ENTRIES = 10_000;
/** Real keys are 46 characters; anything much longer is refused without hashing or a lookup. */
const MAX_KEY_LENGTH = 256;

/** A new random key (256 bits) to hand out once. */
export function generateApiKey(): string {
  return `mk_${randomBytes(32).toString('base64url')}`;
}

/** The SHA-256 digest stored for a key; keys are random, so a fast hash is enough. */
export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

export interface KeyVerifier {
  /** Resolves true for a configured or stored, unrevoked key. Rejects only when the store fails. */
  verify(key: string | undefined): Promise<boolean>;
}

/**
 * Checks keys against `API_KEYS` (compared digest to digest in constant time) and the
 * `api_key` table. Results are cached for {@link KEY_CACHE_MS} by digest, so a busy key
 * costs no round trip and a revocation still lands within seconds.
 */
export function createKeyVerifier(db: Queryable, plainKeys: readonly string[]): KeyVerifier {
  const configured = plainKeys.map(hashApiKey);
  const cache = new Map<string, { active: boolean; until: number }>();

  return {
    async verify(key) {
      if (key === undefined || key === '' || key.length > MAX_KEY_LENGTH) return false;
      const digest = hashApiKey(key);
      if (configured.some((c) => timingSafeEqual(c, digest))) return true;
      const cacheKey = digest.toString('base64');
      const cached = cache.get(cacheKey);
      if (cached !== undefined && cached.until > Date.now()) return cached.active;
      const active = await isActiveKeyHash(db, digest);
      if (cache.size >= KEY_CACHE_MAX_ENTRIES) cache.clear();
      cache.set(cacheKey, { active, until: Date.now() + KEY_CACHE_MS });
      return active;
    },
  };
}
