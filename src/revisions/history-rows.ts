import type { CancelSignal, Queryable } from '../db/store.js';

/**
 * The history rows (replaced or removed values) stored for some projects over a range of
 * days, bounds inclusive and null for open: what a vintage or triangle read goes through
 * besides the current points, and what it is priced by. One primary-key range scan a project.
 */
export async function countHistoryRows(
  db: Queryable,
  projectIds: readonly number[],
  from: string | null,
  to: string | null,
  signal?: CancelSignal,
): Promise<number> {
  const [row] = await db.query<{ rows: string | number }>(
    `select count(*)::text as rows from point_history h
     where h.project_id = any($1::integer[])
       and h.day between coalesce($2::date, '-infinity') and coalesce($3::date, 'infinity')`,
    [projectIds, from, to],
    signal,
  );
  return Number(row?.rows ?? 0);
}
