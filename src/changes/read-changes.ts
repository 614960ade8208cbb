import type { Queryable } from '../db/store.js';
import { encodeCursor, type ChangesRequest, type FeedPosition } from './changes-request.js';

/** One write of one point, as the feed serves it. */
export interface Change {
  metric: string;
  project: string;
  date: string;
  /** The value written, as PostgreSQL's numeric text (exact); null when the write removed the point. */
  value: string | null;
  /** The extra fields written with it, as PostgreSQL's JSON text; null when it has none (and for a removal). */
  extra: string | null;
  /** When the writing transaction wrote it: ISO 8601 UTC with microseconds. */
  updatedAt: string;
}

export interface ChangesPage {
  changes: Change[];
  /** Where the next page starts, while more changes remain now; else undefined. */
  next: string | undefined;
  /** Where to resume later, always: after the last change served. */
  cursor: string;
}

/**
 * One page of the changes feed, in commit order: the log's sequence is taken while the
 * writer holds the one lock all writers take turns on (migration 0007), so a reader
 * always sees a prefix of it and a cursor (the last sequence served) can never be passed
 * by a change that commits later: following cursors skips nothing and repeats nothing
 * while writes go on. Asks for one row more than the page to know whether more remain.
 */
export async function readChanges(db: Queryable, request: ChangesRequest): Promise<ChangesPage> {
  const { position, limit } = request;
  const rows = await db.query<ChangeRow>(CHANGES_SQL, [position.since, position.seq, limit + 1]);
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  const after: FeedPosition = last === undefined ? position : { since: position.since, seq: last.seq };
  return {
    changes: page.map((row) => ({
      metric: row.metric,
      project: row.slug,
      date: row.day,
      value: row.value,
      extra: row.extra,
      updatedAt: row.written_at,
    })),
    next: rows.length > limit ? encodeCursor(after) : undefined,
    cursor: encodeCursor(after),
  };
}

/**
 * A page as REST serves it: the numeric and JSON text go into the answer as they are,
 * exact. `extra` is there only for a write that carried extra fields.
 */
export function changesPageJson(page: ChangesPage): string {
  const changes = page.changes.map(
    (c) =>
      `{"metric":${JSON.stringify(c.metric)},"project":${JSON.stringify(c.project)}` +
      `,"date":"${c.date}","value":${c.value ?? 'null'}${c.extra === null ? '' : `,"extra":${c.extra}`}` +
      `,"updatedAt":"${c.updatedAt}"}`,
  );
  return (
    `{"changes":[${changes.join(',')}]${page.next === undefined ? '' : `,"next":"${page.next}"`}` +
    `,"cursor":"${page.cursor}"}`
  );
}

// Private

interface ChangeRow {
  seq: string;
  metric: string;
  slug: string;
  day: string;
  value: string | null;
  extra: string | null;
  written_at: string;
}

/**
 * The page walks the primary key from where it starts, so it reads the rows it serves and
 * no more, however many changes lie outside it. It starts right after a cursor that names a
 * change served with this `since`; otherwise (a first page, or a page that found nothing
 * yet) at the first change written at or after `since`, found through the index on
 * (written_at, seq) (migration 0012); with no such change the bound is past every sequence.
 * Write times follow sequence order (migration 0008), so no change at or after `since`
 * comes before that first one. Only a write stamped without the turn (by hand in SQL, at its
 * transaction's start) breaks the order: the `written_at` condition keeps it out when it is
 * older than `since`, and a first page starts at it when it is the earliest one after.
 * `since` goes as text: the driver sends a timestamptz parameter through a JavaScript Date,
 * which cuts its microseconds.
 */
const CHANGES_SQL = `
select pc.seq::text as seq, m.name as metric, p.slug, pc.day::text as day,
  trim_scale(pc.value)::text as value, pc.extra::text as extra,
  to_char(pc.written_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as written_at
from point_change pc
join project p on p.id = pc.project_id
join metric m on m.id = p.metric_id
where pc.seq > coalesce(
    (select c.seq from point_change c where c.seq = $2::bigint and c.written_at >= $1::text::timestamptz),
    (select greatest(f.seq - 1, $2::bigint) from point_change f
      where f.written_at >= $1::text::timestamptz order by f.written_at, f.seq limit 1),
    9223372036854775807)
  and pc.written_at >= $1::text::timestamptz
order by pc.seq
limit $3`;
