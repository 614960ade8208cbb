import type { CancelSignal, Queryable } from '../db/store.js';

/**
 * One day of a revision triangle, numbers as PostgreSQL's text so nothing is rounded on
 * the way: `values` holds one entry per lag asked for (null where nothing stood then).
 */
export interface TriangleRow {
  date: string;
  /** UTC with microseconds, as the changes feed writes it: passed back as `as_of`, it reads this write. */
  firstWrittenAt: string;
  values: (string | null)[];
  /** The value served now; null when the day was removed. */
  latest: string | null;
  /** Writes after the first (revisions and removals); 0 for a day never revised. */
  revisionCount: number;
  /** The largest change of a revision relative to the value it replaced, in percent; null when that was 0. */
  maxAbsRevisionPercent: number | null;
}

/**
 * The revision triangle of one project over `[from, to]`, one row per day that was ever
 * written, ascending. A day's values are every value it was served with: the history's
 * spans, then the current one. `lags[i]` reads the one standing at the end of UTC day
 * D + lag (written before 00:00 UTC of the day after, not yet replaced by then). A write
 * after the first is a revision, or a removal when a span ends without another value
 * starting then; only a value replacing another directly (not re-added after a removal,
 * not replacing a 0) has a percentage.
 */
export async function readTriangle(
  db: Queryable,
  projectId: number,
  from: string,
  to: string,
  lags: readonly number[],
  signal?: CancelSignal,
): Promise<TriangleRow[]> {
  const rows = await db.query<RawRow>(TRIANGLE_SQL, [projectId, from, to, lags], signal);
  return rows.map((r) => {
    const known = JSON.parse(r.known ?? '{}') as Record<string, string>;
    return {
      date: r.date,
      firstWrittenAt: r.firstWrittenAt,
      values: lags.map((_, i) => known[String(i + 1)] ?? null),
      latest: r.latest,
      revisionCount: Number(r.revisionCount),
      maxAbsRevisionPercent: r.maxPercent === null ? null : Number(r.maxPercent),
    };
  });
}

// Private

interface RawRow {
  date: string;
  firstWrittenAt: string;
  known: string | null;
  latest: string | null;
  revisionCount: string | number;
  maxPercent: string | null;
}

/** The end of UTC day D + lag, as an inclusive instant (a microsecond before the next day starts). */
const END_OF = (day: string, lag: string) =>
  `((${day} + ${lag})::timestamp at time zone 'UTC' + interval '1 day' - interval '1 microsecond')`;

const TRIANGLE_SQL = `with versions as (
    select h.day, h.value, h.valid_from as since, h.valid_to as until from point_history h
    where h.project_id = $1 and h.day between $2::date and $3::date
    union all
    select c.day, c.value, c.written_at, null from point c
    where c.project_id = $1 and c.day between $2::date and $3::date
  ),
  ordered as (
    select v.*, lag(v.value) over w as replaced, lag(v.until) over w as replaced_until,
      lead(v.since) over w as next_since
    from versions v
    window w as (partition by v.day order by v.since)
  ),
  days as (
    select o.day, min(o.since) as first_written_at,
      count(*) - 1 + count(*) filter (where o.until is not null and o.next_since is distinct from o.until)
        as revision_count,
      nullif(max(abs(o.value - o.replaced) / abs(o.replaced) * 100)
        filter (where o.replaced_until = o.since and o.replaced <> 0), 0) as max_percent,
      max(o.value::text) filter (where o.until is null) as latest
    from ordered o group by o.day
  ),
  known as (
    select v.day, jsonb_object_agg(l.n::text, v.value::text) as known
    from versions v join unnest($4::integer[]) with ordinality as l (lag, n)
      on v.since <= ${END_OF('v.day', 'l.lag')} and (v.until is null or v.until > ${END_OF('v.day', 'l.lag')})
    group by v.day
  )
  select d.day::text as date,
    to_char(d.first_written_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as "firstWrittenAt",
    k.known::text as known, d.latest, d.revision_count::text as "revisionCount",
    d.max_percent::float8::text as "maxPercent"
  from days d left join known k on k.day = d.day
  order by d.day`;
