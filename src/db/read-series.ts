import type { Queryable } from './store.js';

/** One stored point as the API returns it: the date as text, the value as a JS number. */
export interface PointRecord {
  projectId: number;
  date: string;
  value: number;
  extra: Record<string, unknown> | null;
}

export interface SeriesQuery {
  projectIds: readonly number[];
  /** Inclusive bounds; null means unbounded on that side. */
  from: string | null;
  to: string | null;
}

/**
 * The points of several projects in a date range, ordered by project then day:
 * one statement, one primary-key range scan per project, no sort.
 */
export async function readSeries(db: Queryable, q: SeriesQuery): Promise<PointRecord[]> {
  return db.query<PointRecord>(READ_SERIES_SQL, [q.projectIds, q.from, q.to]);
}

/** Exported so a test can EXPLAIN exactly what the service runs. */
export const READ_SERIES_SQL = `select project_id as "projectId", day::text as date, value::float8 as value, extra
     from point
     where project_id = any($1::integer[])
       and day between coalesce($2::date, '-infinity') and coalesce($3::date, 'infinity')
     order by project_id, day`;

/** First and last stored day of one project's series, or nulls when it has none. */
export interface CoverageRecord {
  projectId: number;
  first: string | null;
  last: string | null;
}

/** The stored date coverage of the given projects: two index probes each. */
export async function readCoverage(db: Queryable, projectIds: readonly number[]): Promise<CoverageRecord[]> {
  return db.query<CoverageRecord>(
    `select id as "projectId",
       (select min(day) from point where project_id = id)::text as first,
       (select max(day) from point where project_id = id)::text as last
     from unnest($1::integer[]) as id`,
    [projectIds],
  );
}
