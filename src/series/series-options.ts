import { AGGREGATIONS, type Aggregation } from '../catalog/load-catalog.js';
import { civilFromDays, daysFromCivil, weekday } from '../dates.js';

/**
 * How a series may be shaped beyond replaying its stored daily points: calendar buckets,
 * how a bucket's days are aggregated, what fills a bucket without data, and a transform
 * of the bucketed series. REST takes the lower-case names, GraphQL the upper-case enums.
 */

export const INTERVALS = ['day', 'week', 'month', 'quarter', 'year'] as const;
export const FILLS = ['none', 'null', 'zero', 'previous'] as const;
export const TRANSFORMS = ['moving_average', 'change', 'percent_change', 'cumulative_sum'] as const;

/** The aggregations are the catalog's (each metric names its default), listed here with the other options. */
export { AGGREGATIONS, type Aggregation };

export type Interval = (typeof INTERVALS)[number];
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

/**
 * The start of the bucket holding a day (days since 1970-01-01): ISO weeks from Monday, months, quarters and years
 * from their first day.
 */
export function bucketStart(day: number, interval: Interval): number {
  if (interval === 'day') return day;
  if (interval === 'week') return day - ((weekday(day) + 6) % 7);
  const [y, m] = civilFromDays(day);
  return daysFromCivil(y, interval === 'year' ? 1 : interval === 'quarter' ? m - ((m - 1) % 3) : m, 1);
}

/** The bucket `steps` buckets after (or, negative, before) the one starting on `start`. */
export function shiftBucket(start: number, interval: Interval, steps: number): number {
  if (interval === 'day' || interval === 'week') return start + steps * (interval === 'day' ? 1 : 7);
  const [y, m] = civilFromDays(start);
  const months = y * 12 + (m - 1) + steps * (interval === 'month' ? 1 : interval === 'quarter' ? 3 : 12);
  return daysFromCivil(Math.floor(months / 12), (months % 12) + 1, 1);
}
