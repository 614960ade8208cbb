import type { Queryable } from './store.js';

/** First and last stored day of one project's series, or nulls when it has none. */
export interface CoverageRecord {
  projectId: number;
  first: string | null;
  last: string | null;
}

/** The stored date coverage of the given projects: two index probes each. */
export async function readCoverage(db: Queryable, projectIds: readonly number[], signal?: AbortSignal): Promise<CoverageRecord[]> {
  return db.query<CoverageRecord>(
    `select id as "projectId",
       (select min(day) from point where project_id = id)::text as first,
       (select max(day) from point where project_id = id)::text as last
     from unnest($1::integer[]) as id`,
    [projectIds],
    signal,
  );
}
