import { fromEpochDay, toEpochDay } from '../dates.js';
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
 *
 * The range is clamped to the data that can exist: an omitted or later `to` is `today`
 * (no points lie in the future), and an omitted `from`, or one further back, is
 * {@link ASSUMED_HISTORY_YEARS} before `to`. A range entirely in the future costs one unit.
 *
 * @param today the current UTC day as `YYYY-MM-DD`; passed in so the function stays pure.
 */
export function requestCost(request: Pick<SeriesRequest, 'slugs' | 'from' | 'to' | 'options'>, today: string): number {
  const { days, warmUpDays, buckets } = requestedSpan(request, today);
  const perProject = Math.max(buckets / POINTS_PER_UNIT, (days + warmUpDays) / DAYS_READ_PER_UNIT);
  return Math.max(1, Math.ceil(request.slugs.length * perProject));
}

/** The days, warm-up days and buckets a request can return per project once clamped as described for {@link requestCost}. */
export function requestedSpan(request: Pick<SeriesRequest, 'from' | 'to' | 'options'>, today: string): RequestedSpan {
  const last = Math.min(toEpochDay(request.to ?? today), toEpochDay(today));
  const earliest = toEpochDay(yearsBefore(fromEpochDay(last), ASSUMED_HISTORY_YEARS));
  const first = Math.max(request.from === null ? earliest : toEpochDay(request.from), earliest);
  if (last < first) return { days: 0, warmUpDays: 0, buckets: 0 };
  const { interval, transform, window } = request.options;
  const firstBucket = bucketStart(fromEpochDay(first), interval);
  const warmUpBuckets = transform === 'moving_average' ? (window ?? 1) - 1 : transform === 'change' || transform === 'percent_change' ? 1 : 0;
  return {
    days: last - first + 1,
    warmUpDays: toEpochDay(firstBucket) - toEpochDay(shiftBucket(firstBucket, interval, -warmUpBuckets)),
    buckets: bucketsBetween(firstBucket, bucketStart(fromEpochDay(last), interval), interval),
  };
}

// Private

/** Buckets from the one starting on `first` to the one starting on `last`, both counted. */
function bucketsBetween(first: string, last: string, interval: Interval): number {
  const [y1, m1] = first.split('-').map(Number) as [number, number];
  const [y2, m2] = last.split('-').map(Number) as [number, number];
  switch (interval) {
    case 'day':
      return toEpochDay(last) - toEpochDay(first) + 1;
    case 'week':
      return (toEpochDay(last) - toEpochDay(first)) / 7 + 1;
    case 'month':
      return (y2 - y1) * 12 + (m2 - m1) + 1;
    case 'quarter':
      return ((y2 - y1) * 12 + (m2 - m1)) / 3 + 1;
    case 'year':
      return y2 - y1 + 1;
  }
}

/** The same calendar day `years` earlier (29 February becomes 1 March in a common year). */
function yearsBefore(isoDate: string, years: number): string {
  const [year, month, day] = isoDate.split('-').map(Number) as [number, number, number];
  const date = new Date(Date.UTC(2000, month - 1, day));
  date.setUTCFullYear(year - years, month - 1, day);
  return date.toISOString().slice(0, 10);
}
