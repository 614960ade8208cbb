import type { CancelSignal, Queryable } from '../db/store.js';

/** How a metric's values were revised over a trailing window of its days (see {@link readProfile}). */
export interface ProfileFigures {
  /** Days (project × date) in the window that were ever written. */
  days: number;
  /** The share of them, 0 to 1, written more than once; null when there are none. */
  revisedShare: number | null;
  /** Median hours from a day's first write to each later write of it; null when none was revised. */
  medianRevisionDelayHours: number | null;
  /** The 95th percentile of revisions' changes relative to the value replaced, in percent; null without any. */
  p95AbsRevisionPercent: number | null;
  /** The smallest K such that 95 % of days never change after the end of UTC day D + K; null under 30 days. */
  stableAfterDays: number | null;
}

/** Fewer days than this in the window leave `stableAfterDays` null: too few to say. */
export const MIN_STABLE_DAYS = 30;

/**
 * The revision profile of some projects (a metric's) over the last `lookbackDays` days of
 * data: days after (last day written − lookbackDays), the last day being the latest any of
 * them was ever written for. A day's writes are its values' starts and its removals (a
 * span of the history ending without another value starting then); every write after the
 * first is a revision. Percentiles interpolate (`percentile_cont`), except `stableAfterDays`,
 * which is the smallest K reached by 95 % of days (`percentile_disc`): a day is stable
 * after max(0, UTC date of its last write − D) days.
 */
export async function readProfile(
  db: Queryable,
  projectIds: readonly number[],
  lookbackDays: number,
  signal?: CancelSignal,
): Promise<ProfileFigures> {
  const [row] = await db.query<RawProfile>(PROFILE_SQL, [projectIds, lookbackDays], signal);
  const days = Number(row?.days ?? 0);
  const number = (text: string | null | undefined) => (text === null || text === undefined ? null : Number(text));
  return {
    days,
    revisedShare: days === 0 ? null : Number(row!.revised) / days,
    medianRevisionDelayHours: number(row?.medianHours),
    p95AbsRevisionPercent: number(row?.p95),
    stableAfterDays: days < MIN_STABLE_DAYS ? null : number(row?.stable),
  };
}

// Private

interface RawProfile {
  days: string;
  revised: string;
  medianHours: string | null;
  p95: string | null;
  stable: string | null;
}

const PROFILE_SQL = `with bounds as (
    select greatest(
      (select max(c.day) from point c where c.project_id = any($1::integer[])),
      (select max(h.day) from point_history h where h.project_id = any($1::integer[]))
    ) - $2::integer as after
  ),
  versions as (
    select h.project_id, h.day, h.value, h.valid_from as since, h.valid_to as until
    from point_history h, bounds b where h.project_id = any($1::integer[]) and h.day > b.after
    union all
    select c.project_id, c.day, c.value, c.written_at, null
    from point c, bounds b where c.project_id = any($1::integer[]) and c.day > b.after
  ),
  ordered as (
    select v.*, lag(v.value) over w as replaced, lag(v.until) over w as replaced_until,
      lead(v.since) over w as next_since, first_value(v.since) over w as first_since
    from versions v
    window w as (partition by v.project_id, v.day order by v.since)
  ),
  writes as (
    select o.project_id, o.day, o.first_since, o.since as at from ordered o where o.since > o.first_since
    union all
    select o.project_id, o.day, o.first_since, o.until from ordered o
    where o.until is not null and o.next_since is distinct from o.until
  ),
  day_stats as (
    select d.project_id, d.day, d.first_since, count(w.at) as revisions, max(w.at) as last_revision
    from (select distinct project_id, day, first_since from ordered) d
      left join writes w on w.project_id = d.project_id and w.day = d.day
    group by d.project_id, d.day, d.first_since
  )
  select (select count(*) from day_stats)::text as days,
    (select count(*) from day_stats where revisions > 0)::text as revised,
    (select percentile_cont(0.5) within group (order by extract(epoch from w.at - w.first_since)::float8 / 3600)
      from writes w)::text as "medianHours",
    (select percentile_cont(0.95) within group (order by (abs(o.value - o.replaced) / abs(o.replaced) * 100)::float8)
      from ordered o where o.replaced_until = o.since and o.replaced <> 0)::text as p95,
    (select percentile_disc(0.95) within group (order by
        greatest(0, (coalesce(s.last_revision, s.first_since) at time zone 'UTC')::date - s.day))
      from day_stats s)::text as stable`;
