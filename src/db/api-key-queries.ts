import type { Queryable } from './store.js';

export interface ApiKeyRecord {
  name: string;
  createdAt: string;
  revokedAt: string | null;
}

/** Stores a key's digest under a unique name. Throws when the name is taken. */
export async function insertApiKey(db: Queryable, name: string, keyHash: Buffer): Promise<void> {
  await db.query('insert into api_key (name, key_hash) values ($1, $2)', [name, keyHash]);
}

/** True when a key with this digest exists and is not revoked. */
export async function isActiveKeyHash(db: Queryable, keyHash: Buffer): Promise<boolean> {
  const rows = await db.query<{ active: boolean }>(
    'select revoked_at is null as active from api_key where key_hash = $1',
    [keyHash],
  );
  return rows[0]?.active === true;
}

export async function listApiKeys(db: Queryable): Promise<ApiKeyRecord[]> {
  return db.query<ApiKeyRecord>(
    `select name, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as "createdAt",
       to_char(revoked_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as "revokedAt"
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
