import { LRUCache } from 'lru-cache';

/** A finished answer, kept to be sent again without asking the database. */
export interface CachedAnswer {
  body: Buffer;
  contentType: string;
  /** REST's validators, sent again with the body. */
  etag?: string | undefined;
  lastModified?: number | undefined;
  /** Rate-limit units the request cost: a hit costs the same as the miss did. */
  cost: number;
}

export interface ResponseCacheStats {
  hits: number;
  misses: number;
  entries: number;
  bytes: number;
  maxBytes: number;
  /** Times every entry was dropped because data may have changed (a write, or listening started again). */
  invalidations: number;
}

/**
 * Answers to hot reads, bounded by bytes (least recently used first out). An entry is
 * only good at the data version it was read at; rather than ask the database for the
 * version on every request (a round trip, which is what a hit saves), every entry is
 * dropped when PostgreSQL announces a write (`series_updated`, sent after the writing
 * transaction commits, whoever wrote it, and heard by every instance). While that
 * announcement cannot be heard (before listening starts, or while the listening
 * connection is down), the cache is off, and it starts empty when listening resumes.
 */
export interface ResponseCache {
  get(key: string): CachedAnswer | undefined;
  /** Taken before the database is read: an answer is kept only if no write was announced since. */
  ticket(): number;
  /**
   * Whether an answer of `bytes` would be kept under `key` now: the cache is on, writes are heard, and it is not too
   * large (see MAX_ENTRY_SHARE).
   */
  keeps(key: string, bytes: number): boolean;
  set(key: string, answer: CachedAnswer, ticket: number): void;
  /** Every entry is stale now; `listening` says whether writes will be heard from here on. */
  invalidate(listening: boolean): void;
  readonly stats: ResponseCacheStats;
}

/** An answer larger than this share of the cache is not kept: one huge answer would push out hundreds of hot ones. */
const MAX_ENTRY_SHARE = 1 / 16;

export function createResponseCache(maxBytes: number): ResponseCache {
  const stats = { hits: 0, misses: 0, invalidations: 0 };
  let listening = false;
  /** Bumped by every invalidation: a read that began before it may hold older data. */
  let generation = 0;
  const maxEntrySize = Math.floor(maxBytes * MAX_ENTRY_SHARE);
  const entries =
    maxBytes > 0
      ? new LRUCache<string, CachedAnswer>({
          maxSize: maxBytes,
          maxEntrySize,
          sizeCalculation: (answer, key) => entrySize(key, answer.body.length),
        })
      : undefined;
  return {
    get(key) {
      if (entries === undefined || !listening) return undefined;
      const answer = entries.get(key);
      if (answer === undefined) stats.misses += 1;
      else stats.hits += 1;
      return answer;
    },
    ticket: () => generation,
    keeps(key, bytes) {
      return entries !== undefined && listening && entrySize(key, bytes) <= maxEntrySize;
    },
    set(key, answer, ticket) {
      if (entries !== undefined && listening && ticket === generation) entries.set(key, answer);
    },
    invalidate(nowListening) {
      listening = nowListening;
      generation += 1;
      if (entries === undefined || entries.size === 0) return;
      entries.clear();
      stats.invalidations += 1;
    },
    get stats() {
      return { ...stats, entries: entries?.size ?? 0, bytes: entries?.calculatedSize ?? 0, maxBytes };
    },
  };
}

// Private

/** What an entry counts against the cache's bytes: its body, its key and about 200 bytes of bookkeeping. */
function entrySize(key: string, bodyBytes: number): number {
  return bodyBytes + key.length + 200;
}
