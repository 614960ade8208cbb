import type { Queryable } from './store.js';

/** The cursor `npm run sync` saved for an upstream and scope, if any. */
export async function readSyncCursor(db: Queryable, upstream: string): Promise<string | undefined> {
  const [row] = await db.query<{ cursor: string }>('select cursor from sync_cursor where upstream = $1', [upstream]);
  return row?.cursor;
}

/**
 * Saves where a sync stands in an upstream's changes feed; call it in the transaction that applied
 * the entries before it.
 */
export async function saveSyncCursor(db: Queryable, upstream: string, cursor: string): Promise<void> {
  await db.query(
    `insert into sync_cursor (upstream, cursor) values ($1, $2)
     on conflict (upstream) do update set cursor = excluded.cursor, saved_at = now()`,
    [upstream, cursor],
  );
}
