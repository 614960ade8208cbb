import type { CancelSignal, Queryable } from './store.js';

/** First and last stored day of one project's series (nulls when it has none), and its last write as ISO 8601 UTC with microseconds. */
export interface CoverageRecord {
  projectId: number;
  first: string | null;
  last: string | null;
  updatedAt: string | null;
}

/** The stored date coverage and last write of the given projects: two index probes and a key lookup each. */
export async function readCoverage(db: Queryable, projectIds: readonly number[], signal?: CancelSignal): Promise<CoverageRecord[]> {
  return db.query<CoverageRecord>(
    `select u.id as "projectId",
       (select min(pt.day) from point pt where pt.project_id = u.id)::text as first,
       (select max(pt.day) from point pt where pt.project_id = u.id)::text as last,
       (select to_char(p.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') from project p where p.id = u.id) as "updatedAt"
     from unnest($1::integer[]) as u (id)`,
    [projectIds],
    signal,
  );
}
