import { civilFromDays, daysFromCivil, toEpochDay } from '../dates.js';
import { bucketStart, shiftBucket, type Interval } from '../series/series-options.js';
import type { SeriesRequest } from '../series/series-request.js';

/**
 * How far back an omitted (or earlier) start date is assumed to reach: a cheap stand-in
 * for the first stored day, so pricing a request never needs a query.
 */
export const ASSUMED_HISTORY_YEARS = 10;

/** Points (buckets) per project that cost one unit. */
const POINTS_PER_UNIT = 365;
/** Days read per project that cost one unit: reading is cheaper than writing out a point. */
const DAYS_READ_PER_UNIT = 3650;

/** What a request asks for per project, once its range is clamped as {@link requestCost} describes. */
export interface RequestedSpan {
  /** Days in the range (inclusive). */
  days: number;
  /** Days read before the range to warm a transform up (a moving average's earlier buckets, a change's previous bucket). */
  warmUpDays: number;
  /** Buckets (points) in the range: the days themselves for daily requests. */
  buckets: number;
}

/**
 * What a series request costs against its caller's rate limit, per project: one unit per
 * 365 points it asks for or per 3,650 days it makes the database read, whichever is more,
 * rounded up over all projects and never less than one:
 * `cost = max(1, ceil(projects × max(buckets / 365, (days + warm-up) / 3650)))`.
 * A daily request costs what it always did (a project-year is one unit); a yearly view of
 * ten years costs one unit per project; a daily view of everything costs ten.
 */
export function requestCost(request: Pick<SeriesRequest, 'slugs'>, span: RequestedSpan): number {
  const perProject = Math.max(span.buckets / POINTS_PER_UNIT, (span.days + span.warmUpDays) / DAYS_READ_PER_UNIT);
  return Math.max(1, Math.ceil(request.slugs.length * perProject));
}

/**
 * The days, warm-up days and buckets a request can return per project, its range clamped
 * to the data that can exist: an omitted or later `to` is `today` (no points lie in the
 * future), and an omitted `from`, or one further back, is {@link ASSUMED_HISTORY_YEARS}
 * before `to`. A range entirely in the future is empty.
 *
 * @param today the current UTC day (days since 1970-01-01); passed in so the function stays pure.
 */
export function requestedSpan(request: Pick<SeriesRequest, 'from' | 'to' | 'options'>, today: number): RequestedSpan {
  const last = Math.min(request.to === null ? today : toEpochDay(request.to), today);
  const earliest = yearsBefore(last, ASSUMED_HISTORY_YEARS);
  const first = Math.max(request.from === null ? earliest : toEpochDay(request.from), earliest);
  if (last < first) return { days: 0, warmUpDays: 0, buckets: 0 };
  const { interval, transform, window } = request.options;
  const firstBucket = bucketStart(first, interval);
  const warmUpBuckets = transform === 'moving_average' ? (window ?? 1) - 1 : transform === 'change' || transform === 'percent_change' ? 1 : 0;
  return {
    days: last - first + 1,
    warmUpDays: firstBucket - shiftBucket(firstBucket, interval, -warmUpBuckets),
    buckets: bucketsBetween(firstBucket, bucketStart(last, interval), interval),
  };
}

// Private

/** Buckets from the one starting on `first` to the one starting on `last`, both counted. */
function bucketsBetween(first: number, last: number, interval: Interval): number {
  if (interval === 'day') return last - first + 1;
  if (interval === 'week') return (last - first) / 7 + 1;
  const [y1, m1] = civilFromDays(first);
  const [y2, m2] = civilFromDays(last);
  const months = (y2 - y1) * 12 + (m2 - m1);
  return (interval === 'month' ? months : interval === 'quarter' ? months / 3 : months / 12) + 1;
}

/** The same calendar day `years` earlier (29 February becomes 1 March in a common year). */
function yearsBefore(day: number, years: number): number {
  const [y, m, d] = civilFromDays(day);
  return daysFromCivil(y - years, m, 1) + d - 1;
}
