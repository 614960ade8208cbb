import type { Queryable } from './store.js';

/** One key's spend in one UTC hour. */
export interface HourUsage {
  keyId: string;
  /** The hour's start, ms since the epoch. */
  hour: number;
  units: number;
  requests: number;
}

/** Adds `rows` to what is stored for their key and hour, in one statement. */
export async function addUsage(db: Queryable, rows: readonly HourUsage[]): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `insert into key_usage (key_id, hour, units, requests)
     select key_id, to_timestamp(hour_ms / 1000.0), units, requests
     from unnest($1::text[], $2::float8[], $3::bigint[], $4::bigint[]) as x (key_id, hour_ms, units, requests)
     on conflict (key_id, hour) do update
       set units = key_usage.units + excluded.units, requests = key_usage.requests + excluded.requests`,
    [rows.map((r) => r.keyId), rows.map((r) => r.hour), rows.map((r) => r.units), rows.map((r) => r.requests)],
  );
}

/** A key's stored hours from `since` (ms since the epoch) on, ascending. */
export async function readUsage(db: Queryable, keyId: string, since: number): Promise<HourUsage[]> {
  return db.query<HourUsage>(
    `select key_id as "keyId", extract(epoch from hour)::float8 * 1000 as hour,
       units::float8 as units, requests::float8 as requests
     from key_usage
     where key_id = $1 and hour >= to_timestamp($2 / 1000.0)
     order by hour`,
    [keyId, since],
  );
}

/** Deletes every key's hours before `before` (ms since the epoch). */
export async function deleteUsageBefore(db: Queryable, before: number): Promise<void> {
  await db.query('delete from key_usage where hour < to_timestamp($1 / 1000.0)', [before]);
}
