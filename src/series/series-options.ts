/**
 * How a series may be shaped beyond replaying its stored daily points: calendar buckets,
 * how a bucket's days are aggregated, what fills a bucket without data, and a transform
 * of the bucketed series. REST takes the lower-case names, GraphQL the upper-case enums.
 */

export const INTERVALS = ['day', 'week', 'month', 'quarter', 'year'] as const;
export const AGGREGATIONS = ['sum', 'avg', 'min', 'max', 'first', 'last'] as const;
export const FILLS = ['none', 'null', 'zero', 'previous'] as const;
export const TRANSFORMS = ['moving_average', 'change', 'percent_change', 'cumulative_sum'] as const;

export type Interval = (typeof INTERVALS)[number];
export type Aggregation = (typeof AGGREGATIONS)[number];
export type Fill = (typeof FILLS)[number];
export type Transform = (typeof TRANSFORMS)[number];

/** What a request asks of the series; `aggregation` and `window` are resolved (the metric's default, 7). */
export interface SeriesOptions {
  interval: Interval;
  aggregation: Aggregation;
  fill: Fill;
  transform: Transform | null;
  /** Buckets a moving average spans (this one and the ones before); null without that transform. */
  window: number | null;
}

/** Buckets a moving average spans when `window` is not given. */
export const DEFAULT_WINDOW = 7;
/** The largest `window`: ten years of days. */
export const MAX_WINDOW = 3650;

/**
 * True when the options ask for nothing but the stored daily points, which is what every
 * request without extension parameters gets (the legacy bytes, by the simplest statement).
 * The aggregation of a one-day bucket is its one value whatever the function.
 */
export function isDailyReplay(options: SeriesOptions): boolean {
  return options.interval === 'day' && options.fill === 'none' && options.transform === null;
}

/** The start of the bucket holding a day (`YYYY-MM-DD`): ISO weeks from Monday, months, quarters and years from their first day. */
export function bucketStart(day: string, interval: Interval): string {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  switch (interval) {
    case 'day':
      return day;
    case 'week': {
      const date = new Date(Date.UTC(y, m - 1, d));
      date.setUTCDate(d - ((date.getUTCDay() + 6) % 7));
      return date.toISOString().slice(0, 10);
    }
    case 'month':
      return `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-01`;
    case 'quarter':
      return `${String(y).padStart(4, '0')}-${String(m - ((m - 1) % 3)).padStart(2, '0')}-01`;
    case 'year':
      return `${String(y).padStart(4, '0')}-01-01`;
  }
}

/** The bucket `steps` buckets after (or, negative, before) the one starting on `start`. */
export function shiftBucket(start: string, interval: Interval, steps: number): string {
  const [y, m, d] = start.split('-').map(Number) as [number, number, number];
  const date = new Date(Date.UTC(y, m - 1, d));
  switch (interval) {
    case 'day':
      date.setUTCDate(d + steps);
      break;
    case 'week':
      date.setUTCDate(d + 7 * steps);
      break;
    case 'month':
      date.setUTCMonth(m - 1 + steps);
      break;
    case 'quarter':
      date.setUTCMonth(m - 1 + 3 * steps);
      break;
    case 'year':
      date.setUTCFullYear(y + steps);
      break;
  }
  return date.toISOString().slice(0, 10);
}
