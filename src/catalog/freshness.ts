import { fromEpochDay, toEpochDay } from '../dates.js';
import type { MetricDefinition } from './load-catalog.js';

/** How current one series is against its metric's schedule. */
export interface Freshness {
  /** The newest day that should have landed by now: day D lands by D + 1 at the metric's `expectedBy` (UTC). */
  expectedLastDate: string;
  /** The last stored day; null when the series has none. */
  lastDate: string | null;
  /** The newest write to the series (ISO 8601 UTC with microseconds); null when none. */
  lastWriteAt: string | null;
  /** Days the last stored day lies behind the expected one (0 when on time or ahead); null without data. */
  lagDays: number | null;
  /** True when the last stored day is older than the expected one, or there is none. */
  stale: boolean;
}

const MS_PER_DAY = 86_400_000;

/**
 * The newest day whose value should have landed by `now`: day D is due on D + 1 at
 * `expectedBy` UTC, so that is the day before the date `now - expectedBy` falls on.
 */
export function expectedLastDate(metric: Pick<MetricDefinition, 'expectedBy'>, now: Date): string {
  const [hours, minutes] = metric.expectedBy.split(':').map(Number) as [number, number];
  const offsetMs = (hours * 60 + minutes) * 60_000;
  return fromEpochDay(Math.floor((now.getTime() - offsetMs) / MS_PER_DAY) - 1);
}

/** A series' freshness at `now`, from its last stored day and last write. */
export function freshnessOf(
  metric: Pick<MetricDefinition, 'expectedBy'>,
  coverage: { last: string | null; updatedAt: string | null },
  now: Date,
): Freshness {
  const expected = expectedLastDate(metric, now);
  const lag = coverage.last === null ? null : Math.max(0, toEpochDay(expected) - toEpochDay(coverage.last));
  return {
    expectedLastDate: expected,
    lastDate: coverage.last,
    lastWriteAt: coverage.updatedAt,
    lagDays: lag,
    stale: lag === null || lag > 0,
  };
}
