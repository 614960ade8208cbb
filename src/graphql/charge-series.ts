import { todayEpochDay } from '../dates.js';
import { priceVintageHistory } from '../limits/history-cost.js';
import { priceSeriesRequest } from '../limits/formula-cost.js';
import type { SeriesRequest } from '../series/series-request.js';
import type { GraphqlServices } from './graphql-services.js';
import type { GraphqlContext } from './builder.js';

/** What a series read is priced on: its metric, projects, range and options. */
export type PricedSeries = Pick<SeriesRequest, 'metric' | 'slugs' | 'from' | 'to' | 'options' | 'limitPerProject'> &
  Partial<Pick<SeriesRequest, 'vintage'>>;

/**
 * Charges series to the caller's key as one REST request for the same projects, range
 * and options would be charged. Every field that reads points goes through here before
 * it reads them. (The memory their answer takes is reserved once per request, before it
 * runs: answer-size.ts.)
 */
export async function chargeSeries(ctx: GraphqlContext, request: PricedSeries): Promise<void> {
  const { vintage = 'latest' } = request;
  // A vintage reads the history too, and pays for its rows (counted first).
  const history =
    vintage === 'latest'
      ? 0
      : await priceVintageHistory(ctx.services.reads, { ...request, vintage }, ctx.directory, ctx.signal);
  await ctx.meter.charge(priceSeries(ctx.services, request).cost + history);
}

/**
 * A series read's price against the rate limit and the bytes its points take in an answer,
 * sized by the widest series of the request as the price is.
 */
export function priceSeries(
  { storedSpans, clock }: Pick<GraphqlServices, 'storedSpans' | 'clock'>,
  request: PricedSeries,
): { cost: number; bytes: number } {
  const { cost, span } = priceSeriesRequest(request, todayEpochDay(clock()), (metric, slug) =>
    storedSpans.of(metric, slug),
  );
  return { cost, bytes: request.slugs.length * span.buckets * POINT_BYTES };
}

// Private

/** About what one point takes in an answer (`{"date":"2024-01-01","value":12345.678}`), to size it before reading. */
const POINT_BYTES = 40;
