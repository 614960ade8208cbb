import type { CancelSignal, Queryable } from './store.js';

/**
 * First and last stored day of one project's series (nulls when it has none), and its last write as
 * ISO 8601 UTC with microseconds.
 */
export interface CoverageRecord {
  projectId: number;
  first: string | null;
  last: string | null;
  updatedAt: string | null;
}

/**
 * The stored date coverage and last write of the given projects: two index probes and a key lookup each.
 * With `asOf` (canonical UTC text, see `canonicalInstant`), as they were at that instant, as an as-of read
 * serves the points: a day written later is not covered, and a write made later is not the last one.
 */
export async function readCoverage(
  db: Queryable,
  projectIds: readonly number[],
  signal?: CancelSignal,
  asOf: string | null = null,
): Promise<CoverageRecord[]> {
  if (asOf !== null) return db.query<CoverageRecord>(COVERAGE_AS_OF, [projectIds, asOf], signal);
  return db.query<CoverageRecord>(
    `select u.id as "projectId",
       (select min(pt.day) from point pt where pt.project_id = u.id)::text as first,
       (select max(pt.day) from point pt where pt.project_id = u.id)::text as last,
       (select ${isoInstant('p.updated_at')} from project p where p.id = u.id) as "updatedAt"
     from unnest($1::integer[]) as u (id)`,
    [projectIds],
    signal,
  );
}

/** One series' project row, and its first and last stored day; both null when it has no points. */
export interface StoredSpanRecord {
  projectId: number;
  metric: string;
  slug: string;
  first: string | null;
  last: string | null;
}

/**
 * The first and last stored day of the named series, or of every series when `only` is
 * undefined: two index probes a series (pricing requests by what they will read; where a sync resumes).
 */
export async function readStoredSpans(
  db: Queryable,
  only?: readonly { metric: string; slug: string }[],
): Promise<StoredSpanRecord[]> {
  return db.query<StoredSpanRecord>(
    `select p.id as "projectId", m.name as metric, p.slug,
       (select min(pt.day) from point pt where pt.project_id = p.id)::text as first,
       (select max(pt.day) from point pt where pt.project_id = p.id)::text as last
     from project p join metric m on m.id = p.metric_id
     where $1::text[] is null or (m.name, p.slug) in (select * from unnest($1::text[], $2::text[]))`,
    [only?.map((s) => s.metric) ?? null, only?.map((s) => s.slug) ?? null],
  );
}

// Private

function isoInstant(value: string): string {
  return `to_char(${value} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

/**
 * Coverage as of $2. Days: those whose value then was the current one (written by then) or
 * one in the history whose span holds the instant, as series-sql.ts reads points as of it.
 * Last write: the series' own when it was by then (the usual case, one key lookup), else the
 * newest write time by then among the values (their writes) and the history (each span's
 * start, and its end: the write that replaced or removed it).
 */
const COVERAGE_AS_OF =
  `select u.id as "projectId", c.first, c.last,
    (select case when p.updated_at <= $2::text::timestamptz then ${isoInstant('p.updated_at')} ` +
  (`else ${isoInstant(`greatest(
        (select max(pt.written_at) from point pt where pt.project_id = u.id and pt.written_at <= $2::text::timestamptz),
        (select max(h.valid_from) from point_history h where h.project_id = u.id and h.valid_from <= $2::text::timestamptz),
        (select max(h.valid_to) from point_history h where h.project_id = u.id and h.valid_to <= $2::text::timestamptz))`)}` +
    ` `) +
  `end
     from project p where p.id = u.id) as "updatedAt"
  from unnest($1::integer[]) as u (id)
  cross join lateral (
    select min(s.day)::text as first, max(s.day)::text as last
    from (
      select pt.day from point pt where pt.project_id = u.id and pt.written_at ` +
  `<= $2::text::timestamptz
      union all
      select h.day from point_history h where h.project_id = u.id and ` +
  `h.valid_from <= $2::text::timestamptz and h.valid_to > $2::text::timestamptz
    ) s
  ) c`;
