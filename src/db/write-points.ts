import type { Queryable } from './store.js';

/** One daily value ready to store; `value` is a number or exact decimal text. */
export interface PointRow {
  projectId: number;
  day: string;
  value: number | string;
  extra: string | null;
}

/** A day whose point a write removes. */
export interface RemovedPoint {
  projectId: number;
  day: string;
}

/** What a write did: points it added, and points whose earlier value it revised or removed. */
export interface WriteCount {
  added: number;
  revised: number;
  removed: number;
}

/** The point table's columns in the order CSV loads give them. */
export const POINT_COLUMNS = ['project_id', 'day', 'value', 'extra'] as const;

/**
 * Inserts or replaces points, one statement for the whole batch. A batch must not hold
 * the same (project, day) twice: PostgreSQL refuses to update one row twice in a statement.
 * Values are stored canonical (`trim_scale`: 42.0 is kept as 42, 1.50 as 1.5), so both APIs
 * serve integers as integers and decimals without trailing zeros. A point whose value and
 * extra fields are unchanged is left as it is: not written, not a revision, not a change.
 * A replaced value goes to the history with the time it was served (see migration 0007).
 */
export async function upsertPoints(db: Queryable, rows: readonly PointRow[]): Promise<WriteCount> {
  if (rows.length === 0) return { added: 0, revised: 0, removed: 0 };
  await takeWriteTurn(db);
  const written = await db.query<{ added: boolean }>(
    `insert into point (project_id, day, value, extra)
     select x.project_id, x.day, trim_scale(x.value), x.extra::jsonb
     from unnest($1::integer[], $2::date[], $3::numeric[], $4::text[]) ` +
      `as x (project_id, day, value, extra)
     on conflict (project_id, day) do update set value = excluded.value, ` +
      `extra = excluded.extra, written_at = write_time()
       where (point.value, point.extra) is distinct from (excluded.value, ` +
      `excluded.extra)
     returning xmax = 0 as added`,
    [rows.map((r) => r.projectId), rows.map((r) => r.day), rows.map((r) => String(r.value)), rows.map((r) => r.extra)],
  );
  return count(written);
}

/** Removes points, one statement for the batch; a day without a point is no change. */
export async function removePoints(db: Queryable, days: readonly RemovedPoint[]): Promise<WriteCount> {
  if (days.length === 0) return { added: 0, revised: 0, removed: 0 };
  await takeWriteTurn(db);
  const removed = await db.query(
    `delete from point p using unnest($1::integer[], $2::date[]) as x (project_id, day)
     where p.project_id = x.project_id and p.day = x.day
     returning 1`,
    [days.map((d) => d.projectId), days.map((d) => d.day)],
  );
  return { added: 0, revised: 0, removed: removed.length };
}

/**
 * Removes a series' points in `[from, to]` on days other than `kept`, one statement. The
 * days are chosen once this writer holds its turn, so a day another writer committed
 * while this one waited is removed too: a mirror of the range leaves nothing it was not sent.
 */
export async function removePointsExcept(
  db: Queryable,
  projectId: number,
  from: string,
  to: string,
  kept: readonly string[],
): Promise<WriteCount> {
  await takeWriteTurn(db);
  const removed = await db.query(
    `delete from point
     where project_id = $1 and day between $2::date and $3::date and day <> all($4::date[])
     returning 1`,
    [projectId, from, to, kept],
  );
  return { added: 0, revised: 0, removed: removed.length };
}

/**
 * Loads points in bulk through a staging table that `fill` writes (by COPY), then upserts
 * them into the point table in one statement, as {@link upsertPoints} does. Runs in the
 * caller's transaction; the staging table is dropped at commit.
 */
export async function upsertStagedPoints(tx: Queryable, fill: (staging: string) => Promise<void>): Promise<void> {
  await tx.exec('create temporary table staged_point (like point including defaults) on commit drop');
  await fill('staged_point');
  await takeWriteTurn(tx);
  await tx.exec(
    `insert into point (project_id, day, value, extra)
    select project_id, day, trim_scale(value), extra from staged_point
    on conflict (project_id, day) do update set value = excluded.value, ` +
      `extra = excluded.extra, written_at = write_time()
      where (point.value, point.extra) is distinct from (excluded.value, ` +
      `excluded.extra)`,
  );
}

/**
 * Fills the empty point table from `fill` (COPY into `point`) the way PostgreSQL's manual
 * advises for a bulk load ("Populating a Database"): without its primary key and foreign
 * key, which are built once afterwards, set-based: checking them row by row would more
 * than double a first start's load. Nothing is replaced, so nothing goes to the history,
 * and the changes feed starts after this load. Runs in the caller's transaction, so no
 * one sees the table without its keys.
 */
export async function bulkLoadPoints(tx: Queryable, fill: (table: string) => Promise<void>): Promise<void> {
  await tx.exec(`set local metrics.change_log = 'off';
    alter table point drop constraint point_pkey, drop constraint point_project_id_fkey`);
  await fill('point');
  await tx.exec(`alter table point add constraint point_pkey primary key (project_id, day),
    add constraint point_project_id_fkey foreign key (project_id) references project (id)`);
}

/** True when at least one point is stored: tells an empty database from a loaded one. */
export async function hasPoints(db: Queryable): Promise<boolean> {
  const [row] = await db.query<{ any: boolean }>('select exists (select 1 from point) as any');
  return row?.any === true;
}

// Private

/**
 * Every write ends by bumping the one dataset_version row (migration 0007's triggers), so
 * two transactions that each wrote points and then wait for that row's lock deadlock. Taking
 * the row first, before any point is locked, gives every writer the same lock order: writes
 * wait for one another (each only for its last statements; staging by COPY runs before) and
 * never deadlock.
 */
async function takeWriteTurn(db: Queryable): Promise<void> {
  await db.query('select 1 from dataset_version for update');
  // The write time (migration 0008), once per transaction and only now that this writer
  // holds the turn: every writer before it has committed, so write times follow commit order.
  await db.query(
    `select set_config('metrics.write_time', coalesce(nullif(current_setting('metrics.write_time', ` +
      `true), ''), clock_timestamp()::text), true)`,
  );
}

function count(rows: readonly { added: boolean }[]): WriteCount {
  const added = rows.filter((r) => r.added).length;
  return { added, revised: rows.length - added, removed: 0 };
}
