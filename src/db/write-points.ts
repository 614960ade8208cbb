import type { Queryable } from './store.js';

/** One daily value ready to store; `value` is a number or exact decimal text. */
export interface PointRow {
  projectId: number;
  day: string;
  value: number | string;
  extra: string | null;
}

/**
 * Inserts or replaces points, one statement for the whole batch. A batch must not hold
 * the same (project, day) twice: PostgreSQL refuses to update one row twice in a statement.
 */
export async function upsertPoints(db: Queryable, rows: readonly PointRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `insert into point (project_id, day, value, extra)
     select x.project_id, x.day, x.value, x.extra::jsonb
     from unnest($1::integer[], $2::date[], $3::numeric[], $4::text[]) as x (project_id, day, value, extra)
     on conflict (project_id, day) do update set value = excluded.value, extra = excluded.extra`,
    [rows.map((r) => r.projectId), rows.map((r) => r.day), rows.map((r) => String(r.value)), rows.map((r) => r.extra)],
  );
}

/** True when at least one point is stored: tells an empty database from a loaded one. */
export async function hasPoints(db: Queryable): Promise<boolean> {
  const [row] = await db.query<{ any: boolean }>('select exists (select 1 from point) as any');
  return row?.any === true;
}
