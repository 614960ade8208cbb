import { civilFromDays, daysFromCivil, toEpochDay } from '../dates.js';
import { bucketStart, isDailyReplay, shiftBucket, type Interval } from '../series/series-options.js';
import type { SeriesRequest } from '../series/series-request.js';

/**
 * How far back an omitted (or earlier) start date is assumed to reach at least: every
 * request is priced for this much history, and a series whose stored days reach further
 * for what it holds ({@link priceRequest}).
 */
export const ASSUMED_HISTORY_YEARS = 10;

/** Points (buckets) per project that cost one unit. */
const POINTS_PER_UNIT = 365;
/** Days read per project that cost one unit: reading is cheaper than writing out a point. */
const DAYS_READ_PER_UNIT = 3650;

/** What a request asks for per project, once its range is clamped as {@link priceRequest} describes. */
export interface RequestedSpan {
  /** Days in the range (inclusive). */
  days: number;
  /**
   * Days read before the range to warm a transform up (a moving average's earlier buckets, a
   * change's previous bucket).
   */
  warmUpDays: number;
  /** Buckets (points) in the range: the days themselves for daily requests. */
  buckets: number;
}

/** A series' first and last stored day, as days since 1970-01-01. */
export interface StoredSpan {
  first: number;
  last: number;
}

/** A request's price given its series' stored days, and the span it is sized by. */
export interface PricedRequest {
  /** What it costs against the caller's rate limit. */
  cost: number;
  /** The widest span per project: the assumed one, or what a series' stored days make it read. */
  span: RequestedSpan;
}

/**
 * What a series request costs against its caller's rate limit, per project: one unit per
 * 365 points it asks for or per 3,650 days it makes the database read, whichever is more,
 * rounded up over all projects and never less than one:
 * `cost = max(1, ceil(Σ projects max(buckets / 365, (days + warm-up) / 3650)))`.
 * A daily request costs a unit per project-year; a yearly view of
 * ten years costs one unit per project; a daily view of ten years costs ten.
 *
 * The range is clamped to the data that can exist: an omitted or later `to` is `today`
 * (no points lie in the future), and an omitted `from`, or one further back, is
 * {@link ASSUMED_HISTORY_YEARS} before `to`; a range entirely in the future is empty.
 * That assumed span is the least each series is priced at. An omitted start reads from a
 * series' first stored day and an omitted end to its last, which may lie further back, or
 * after today (a mistyped year): such a series is priced at what the statement reads of it
 * (the range asked, clipped to its stored days) when that costs more, so a request never
 * reads more than it paid for. With `limitPerProject`, a series is priced for the points it
 * writes and, for stored days, the days it reads ({@link limitedSpan}): the latest value of
 * every project of a metric costs one unit.
 *
 * @param today the current UTC day (days since 1970-01-01); passed in so the function stays pure.
 * @param stored each slug's stored span, in the order of `request.slugs`; undefined for a series
 *   without points (or not known).
 */
export function priceRequest(
  request: Pick<SeriesRequest, 'slugs' | 'from' | 'to' | 'options' | 'limitPerProject'>,
  today: number,
  stored: readonly (StoredSpan | undefined)[],
): PricedRequest {
  const [first, last] = assumedRange(request, today);
  const assumed = limitedSpan(request, spanBetween(first, last, request.options));
  const perProject = unitsPerProject(assumed);
  let beyondAssumed = 0;
  let span = assumed;
  for (const series of stored) {
    // A series within the assumed range reads no more than it (a few warm-up days aside).
    if (series === undefined || (series.first >= first && series.last <= last)) continue;
    const read = limitedSpan(request, readSpan(request, series));
    beyondAssumed += Math.max(0, unitsPerProject(read) - perProject);
    span = {
      days: Math.max(span.days, read.days),
      warmUpDays: Math.max(span.warmUpDays, read.warmUpDays),
      buckets: Math.max(span.buckets, read.buckets),
    };
  }
  // Written so that without a series beyond the assumed span the cost is projects × units, to the last bit.
  return { cost: Math.max(1, Math.ceil(request.slugs.length * perProject + beyondAssumed)), span };
}

// Private

/**
 * What a `limitPerProject` request writes and reads: at most that many points; a daily
 * replay reads only those rows (newest first, by the primary key), while buckets are still
 * computed over the whole range, so only their points are cut.
 */
function limitedSpan(request: Pick<SeriesRequest, 'options' | 'limitPerProject'>, span: RequestedSpan): RequestedSpan {
  const limit = request.limitPerProject;
  if (limit == null) return span;
  const buckets = Math.min(span.buckets, limit);
  return isDailyReplay(request.options)
    ? { days: Math.min(span.days, limit), warmUpDays: 0, buckets }
    : { ...span, buckets };
}

/** The first and last day a request is assumed to read (see {@link priceRequest}). */
function assumedRange(request: Pick<SeriesRequest, 'from' | 'to'>, today: number): [number, number] {
  const last = Math.min(request.to === null ? today : toEpochDay(request.to), today);
  const earliest = yearsBefore(last, ASSUMED_HISTORY_YEARS);
  return [Math.max(request.from === null ? earliest : toEpochDay(request.from), earliest), last];
}

/** Units per project: one per 365 points or per 3,650 days read, whichever is more. */
function unitsPerProject(span: RequestedSpan): number {
  return Math.max(span.buckets / POINTS_PER_UNIT, (span.days + span.warmUpDays) / DAYS_READ_PER_UNIT);
}

/**
 * What the series statement reads of a series: the range asked, clipped to the days it holds
 * (src/series/series-sql.ts).
 */
function readSpan(request: Pick<SeriesRequest, 'from' | 'to' | 'options'>, stored: StoredSpan): RequestedSpan {
  const first = request.from === null ? stored.first : Math.max(toEpochDay(request.from), stored.first);
  const last = request.to === null ? stored.last : Math.min(toEpochDay(request.to), stored.last);
  return spanBetween(first, last, request.options);
}

/** Days, warm-up days and buckets from `first` to `last` (both counted); nothing when `last` is before `first`. */
function spanBetween(first: number, last: number, options: SeriesRequest['options']): RequestedSpan {
  if (last < first) return { days: 0, warmUpDays: 0, buckets: 0 };
  const { interval, transform, window } = options;
  const firstBucket = bucketStart(first, interval);
  const warmUpBuckets =
    transform === 'moving_average'
      ? (window ?? 1) - 1
      : transform === 'change' || transform === 'percent_change'
        ? 1
        : 0;
  return {
    days: last - first + 1,
    warmUpDays: firstBucket - shiftBucket(firstBucket, interval, -warmUpBuckets),
    buckets: bucketsBetween(firstBucket, bucketStart(last, interval), interval),
  };
}

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
