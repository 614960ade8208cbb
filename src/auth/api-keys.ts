import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { findActiveKey, type KeyIdentity } from '../db/api-key-queries.js';
import type { Queryable } from '../db/store.js';

/** The request header that carries the key; the only place a key counts. */
export const API_KEY_HEADER = 'x-api-key';

/** How long a lookup result is trusted: a revoked key stops working within this time. */
export const KEY_CACHE_MS = 5_000;
/** Per cache: valid keys and refused values are kept apart, so a flood of made-up keys never pushes out a real one. */
const KEY_CACHE_MAX_ENTRIES = 10_000;
/** Real keys are 46 characters; anything much longer is refused without hashing or a lookup. */
const MAX_KEY_LENGTH = 256;

/** A new random key (256 bits) to hand out once. */
export function generateApiKey(): string {
  return `mk_${randomBytes(32).toString('base64url')}`;
}

/**
 * The SHA-256 digest stored for a key; keys are random, so a fast hash is enough. It runs
 * per request, hence the one-shot `hash` rather than a `createHash` object.
 */
export function hashApiKey(key: string): Buffer {
  return hash('sha256', key, 'buffer');
}

export interface KeyVerifier {
  /**
   * The identity of a configured or stored, unrevoked key, and undefined for any other
   * value: at once when the answer is known (a configured key, a recent lookup), else
   * through a promise that rejects only when the store fails. `beforeLookup` is called
   * before the store is asked about a key this process has not seen accepted, and may
   * throw to refuse it unchecked.
   */
  verify(
    key: string | undefined,
    beforeLookup?: () => void,
  ): KeyIdentity | undefined | Promise<KeyIdentity | undefined>;
  /** Drops every remembered lookup, so the next request with any key asks the store again. */
  forget(): void;
}

/**
 * Checks keys against `API_KEYS` (compared digest to digest in constant time) and the
 * `api_key` table. Results are cached for {@link KEY_CACHE_MS} by the key as presented,
 * so a busy key costs neither a digest nor a round trip, and a revocation (or a changed
 * limit) still lands within seconds;
 * at once in the process that made it, which calls `forget`.
 * The cache holds what the process was sent anyway, for seconds, and is never written out.
 */
export function createKeyVerifier(db: Queryable, plainKeys: readonly string[]): KeyVerifier {
  const configured = plainKeys.map((key, i) => {
    const digest = hashApiKey(key);
    return { digest, identity: { id: `env:${digest.toString('hex').slice(0, 12)}`, name: `API_KEYS[${i}]` } };
  });
  type Entry = { identity: KeyIdentity | undefined; until: number };
  const accepted = new Map<string, Entry>();
  const refused = new Map<string, Entry>();
  const remember = (key: string, identity: KeyIdentity | undefined) => {
    const cache = identity === undefined ? refused : accepted;
    if (cache.size >= KEY_CACHE_MAX_ENTRIES) cache.clear();
    cache.set(key, { identity, until: Date.now() + KEY_CACHE_MS });
    return identity;
  };

  const lookUp = async (key: string, digest: Buffer) => {
    const row = await findActiveKey(db, digest);
    return remember(
      key,
      row === undefined
        ? undefined
        : {
            id: `db:${digest.toString('hex').slice(0, 12)}`,
            name: row.name,
            ...(row.ratePerMinute === null ? {} : { ratePerMinute: row.ratePerMinute }),
            ...(row.burst === null ? {} : { burst: row.burst }),
          },
    );
  };

  return {
    // Not async: a busy key is answered from the cache without a promise to wait on.
    verify(key, beforeLookup) {
      if (key === undefined || key === '' || key.length > MAX_KEY_LENGTH) return undefined;
      const known = accepted.get(key);
      if (known !== undefined && known.until > Date.now()) return known.identity;
      const cached = refused.get(key);
      if (cached !== undefined && cached.until > Date.now()) return undefined;
      const digest = hashApiKey(key);
      const listed = configured.find((c) => timingSafeEqual(c.digest, digest));
      if (listed !== undefined) return remember(key, listed.identity);
      // A key accepted before is looked up again when its entry expires, whoever sends it.
      if (known === undefined) beforeLookup?.();
      return lookUp(key, digest);
    },
    forget() {
      accepted.clear();
      refused.clear();
    },
  };
}
