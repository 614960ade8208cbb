import { fromEpochDay, toEpochDay } from '../dates.js';
import type { SeriesRequest } from '../series/series-request.js';

/**
 * How far back an omitted (or earlier) start date is assumed to reach: a cheap stand-in
 * for the first stored day, so pricing a request never needs a query.
 */
export const ASSUMED_HISTORY_YEARS = 10;

const DAYS_PER_UNIT = 365;

/**
 * What a series request costs against its caller's rate limit: one unit per project-year
 * asked for, rounded up, and never less than one, so `cost = max(1, ceil(projects × days / 365))`.
 * `days` counts the requested range inclusively after clamping it to the data that can
 * exist: an omitted or later `to` is `today` (no points lie in the future), and an
 * omitted `from`, or one further back, is {@link ASSUMED_HISTORY_YEARS} before `to`.
 * A range that ends before it starts once clamped (all in the future) costs one unit.
 *
 * @param today the current UTC day as `YYYY-MM-DD`; passed in so the function stays pure.
 */
export function requestCost(request: Pick<SeriesRequest, 'slugs' | 'from' | 'to'>, today: string): number {
  return Math.max(1, Math.ceil((request.slugs.length * requestedDays(request, today)) / DAYS_PER_UNIT));
}

/** The days a request can return per project once clamped as described for {@link requestCost}. */
export function requestedDays(request: Pick<SeriesRequest, 'from' | 'to'>, today: string): number {
  const last = Math.min(toEpochDay(request.to ?? today), toEpochDay(today));
  const earliest = toEpochDay(yearsBefore(fromEpochDay(last), ASSUMED_HISTORY_YEARS));
  const first = Math.max(request.from === null ? earliest : toEpochDay(request.from), earliest);
  return Math.max(0, last - first + 1);
}

// Private

/** The same calendar day `years` earlier (29 February becomes 1 March in a common year). */
function yearsBefore(isoDate: string, years: number): string {
  const [year, month, day] = isoDate.split('-').map(Number) as [number, number, number];
  const date = new Date(Date.UTC(2000, month - 1, day));
  date.setUTCFullYear(year - years, month - 1, day);
  return date.toISOString().slice(0, 10);
}
