import { guardUnavailable } from '../api/unavailable.js';
import type { ProjectDirectory } from '../db/project-directory.js';
import type { CancelSignal, Queryable } from '../db/store.js';
import { countHistoryRows } from '../revisions/history-rows.js';
import type { SeriesRequest } from '../series/series-request.js';

/**
 * History rows (replaced or removed values) read per unit of the rate limit, as days read are
 * priced (request-cost.ts): a vintage or triangle read goes through a day's every value.
 */
export const HISTORY_ROWS_PER_UNIT = 3650;

/** Triangle cells (a day's value at a lag, its latest value) per unit, as points written out are priced. */
const CELLS_PER_UNIT = 365;

/**
 * What a series request's vintage adds to its price: nothing for `latest` (no query), else
 * one unit per {@link HISTORY_ROWS_PER_UNIT} history rows its projects hold in its range,
 * rounded up, counted before the read. Added to the price of the same request without a vintage.
 */
export async function priceVintageHistory(
  db: Queryable,
  request: Pick<SeriesRequest, 'metric' | 'slugs' | 'from' | 'to' | 'vintage'>,
  directory: ProjectDirectory,
  signal?: CancelSignal,
): Promise<number> {
  if (request.vintage === 'latest') return 0;
  const ids = request.slugs.flatMap((slug) => directory.idOf(request.metric.name, slug) ?? []);
  const rows = await guardUnavailable(() => countHistoryRows(db, ids, request.from, request.to, signal));
  return Math.ceil(rows / HISTORY_ROWS_PER_UNIT);
}

/**
 * A triangle's price: its cells (days × (lags + 1), the latest value included) per 365,
 * plus its days and the history rows it reads per 3,650, rounded up, at least one unit:
 * `max(1, ceil(days × (lags + 1) / 365 + (days + historyRows) / 3650))`. A 90-day
 * triangle of five lags without revisions costs 2 units.
 */
export function priceTriangle(days: number, lags: number, historyRows: number): number {
  return Math.max(1, Math.ceil((days * (lags + 1)) / CELLS_PER_UNIT + (days + historyRows) / HISTORY_ROWS_PER_UNIT));
}

/** A triangle request's price ({@link priceTriangle}), its history rows counted first. */
export async function priceTriangleRead(
  db: Queryable,
  request: { from: string; to: string; lags: readonly number[] },
  days: number,
  projectId: number,
  signal?: CancelSignal,
): Promise<number> {
  const rows = await guardUnavailable(() => countHistoryRows(db, [projectId], request.from, request.to, signal));
  return priceTriangle(days, request.lags.length, rows);
}

/**
 * A revision profile's price: one unit when a kept profile answers, else one per 3,650 days
 * of data it reads over the metric's projects, `max(1, ceil(projects × lookbackDays / 3650))`.
 */
export function priceProfile(projects: number, lookbackDays: number, kept: boolean): number {
  return kept ? 1 : Math.max(1, Math.ceil((projects * lookbackDays) / HISTORY_ROWS_PER_UNIT));
}
