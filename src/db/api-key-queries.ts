import type { Queryable } from './store.js';

export interface ApiKeyRecord {
  name: string;
  createdAt: string;
  revokedAt: string | null;
  /** The key's own limits; null falls back to RATE_LIMIT_PER_MINUTE / RATE_LIMIT_BURST. */
  ratePerMinute: number | null;
  burst: number | null;
}

/** A key's own rate limit; an absent field falls back to RATE_LIMIT_PER_MINUTE or RATE_LIMIT_BURST. */
export interface KeyRateLimits {
  ratePerMinute?: number | undefined;
  burst?: number | undefined;
}

/** Who a valid key belongs to: all the service keeps of a caller, never the key itself. */
export interface KeyIdentity {
  /**
   * Stable per key: `db:` for a stored key, `env:` for one in `API_KEYS`, then the first 12
   * hex digits of its digest. Not the row id: rate-limit buckets in a Redis that two
   * deployments share are named by it, and their row ids repeat.
   */
  id: string;
  name: string;
  /** The key's own RATE_LIMIT_PER_MINUTE, when it has one. */
  ratePerMinute?: number;
  /** The key's own RATE_LIMIT_BURST, when it has one. */
  burst?: number;
}

/** What a request may know of an active key: its row id, name and own limits (null: the default). */
export interface ActiveKeyRecord {
  id: number;
  name: string;
  ratePerMinute: number | null;
  burst: number | null;
}

/** Stores a key's digest under a unique name, with its own limits if any. Throws when the name is taken. */
export async function insertApiKey(
  db: Queryable,
  name: string,
  keyHash: Buffer,
  limits: KeyRateLimits = {},
): Promise<void> {
  await db.query('insert into api_key (name, key_hash, rate_per_minute, rate_burst) values ($1, $2, $3, $4)', [
    name,
    keyHash,
    limits.ratePerMinute ?? null,
    limits.burst ?? null,
  ]);
}

/** The key with this digest when it exists and is not revoked. */
export async function findActiveKey(db: Queryable, keyHash: Buffer): Promise<ActiveKeyRecord | undefined> {
  const rows = await db.query<ActiveKeyRecord>(
    `select id, name, rate_per_minute as "ratePerMinute", rate_burst as burst
     from api_key
     where key_hash = $1 and revoked_at is null`,
    [keyHash],
  );
  return rows[0];
}

export async function listApiKeys(db: Queryable): Promise<ApiKeyRecord[]> {
  return db.query<ApiKeyRecord>(
    `select name, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as "createdAt",
       to_char(revoked_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as "revokedAt",
       rate_per_minute as "ratePerMinute", rate_burst as burst
     from api_key order by created_at, name`,
  );
}

/** Marks a key revoked; returns false when no active key has that name. */
export async function revokeApiKey(db: Queryable, name: string): Promise<boolean> {
  const rows = await db.query<{ name: string }>(
    'update api_key set revoked_at = now() where name = $1 and revoked_at is null returning name',
    [name],
  );
  return rows.length > 0;
}

export async function countApiKeys(db: Queryable): Promise<number> {
  const [row] = await db.query<{ n: number }>('select count(*)::integer as n from api_key');
  return row?.n ?? 0;
}
