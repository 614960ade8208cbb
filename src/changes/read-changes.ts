import type { Queryable } from '../db/store.js';
import { encodeCursor, type ChangesRequest, type FeedPosition } from './changes-request.js';

/** One write of one point, as the feed serves it. */
export interface Change {
  metric: string;
  project: string;
  date: string;
  /** The value written, as PostgreSQL's numeric text (exact); null when the write removed the point. */
  value: string | null;
  /** When the writing transaction wrote it: ISO 8601 UTC with microseconds. */
  updatedAt: string;
}

export interface ChangesPage {
  changes: Change[];
  /** Where the next page starts, while more changes remain now; else undefined. */
  next: string | undefined;
  /** Where to resume later, always: after the last change served, or past writes known to be complete. */
  cursor: string;
}

/**
 * One page of the changes feed. Changes are ordered by the writing transaction's id, then
 * by their place in it, and a page only reaches transactions below the oldest one still
 * running (`pg_snapshot_xmin`): a transaction that started earlier but commits later can
 * therefore never land behind a cursor already handed out, so following cursors skips
 * nothing and repeats nothing while writes go on. The price: a transaction left open holds
 * the feed back until it ends. Asks for one row more than the page to know whether more
 * remain; the horizon comes from the same statement (one snapshot), so the two agree.
 */
export async function readChanges(db: Queryable, request: ChangesRequest): Promise<ChangesPage> {
  const { position, limit } = request;
  const rows = await db.query<ChangeRow>(CHANGES_SQL, [position.since, position.xact, position.seq, limit + 1]);
  const horizon = rows[0]!.horizon;
  const found = rows.filter((row) => row.xact !== null);
  const page = found.slice(0, limit);
  const last = page.at(-1);
  const more = found.length > limit;
  const after: FeedPosition = last === undefined ? position : { since: position.since, xact: last.xact!, seq: last.seq! };
  // A page that is not full has seen everything below the horizon: later pages may start there.
  const resume: FeedPosition = more || BigInt(horizon) <= BigInt(after.xact) ? after : { since: position.since, xact: horizon, seq: '0' };
  return {
    changes: page.map((row) => ({ metric: row.metric!, project: row.slug!, date: row.day!, value: row.value, updatedAt: row.written_at! })),
    next: more ? encodeCursor(after) : undefined,
    cursor: encodeCursor(resume),
  };
}

/** A page as REST serves it: the numeric text goes into the JSON as it is, exact. */
export function changesPageJson(page: ChangesPage): string {
  const changes = page.changes.map((c) =>
    `{"metric":${JSON.stringify(c.metric)},"project":${JSON.stringify(c.project)},"date":"${c.date}","value":${c.value ?? 'null'},"updatedAt":"${c.updatedAt}"}`);
  return `{"changes":[${changes.join(',')}]${page.next === undefined ? '' : `,"next":"${page.next}"`},"cursor":"${page.cursor}"}`;
}

// Private

interface ChangeRow {
  horizon: string;
  xact: string | null;
  seq: string | null;
  metric: string | null;
  slug: string | null;
  day: string | null;
  value: string | null;
  written_at: string | null;
}

/**
 * `(xact_id, seq) > cursor` walks the primary key; `written_at >= since` keeps the first
 * page from starting at the beginning of time (the index on written_at serves it when
 * `since` is recent). The left join returns the horizon even when no change is found.
 */
const CHANGES_SQL = `
with horizon as (select pg_snapshot_xmin(pg_current_snapshot()) as xmin)
select h.xmin::text as horizon, c.xact, c.seq, c.metric, c.slug, c.day, c.value, c.written_at
from horizon h left join lateral (
  select pc.xact_id::text as xact, pc.seq::text as seq, m.name as metric, p.slug, pc.day::text as day,
    trim_scale(pc.value)::text as value,
    to_char(pc.written_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as written_at
  from point_change pc
  join project p on p.id = pc.project_id
  join metric m on m.id = p.metric_id
  where pc.written_at >= $1::timestamptz
    and (pc.xact_id, pc.seq) > ($2::text::xid8, $3::bigint)
    and pc.xact_id < h.xmin
  order by pc.xact_id, pc.seq
  limit $4
) c on true`;
