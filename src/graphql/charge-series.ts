import { todayEpochDay } from '../dates.js';
import { SMALL_ANSWER_BYTES } from '../limits/answer-budget.js';
import { priceRequest } from '../limits/request-cost.js';
import type { SeriesRequest } from '../series/series-request.js';
import type { GraphqlContext } from './builder.js';

/**
 * About what one point takes in an answer (`{"date":"2024-01-01","value":12345.678}`), to size a large one before it
 * is read.
 */
const POINT_BYTES = 40;

/**
 * Charges series to the caller's key as one REST request for the same projects, range
 * and options would be charged, and reserves the memory a large answer will take. Every
 * field that reads points goes through here before it reads them.
 */
export async function chargeSeries(
  ctx: GraphqlContext,
  request: Pick<SeriesRequest, 'metric' | 'slugs' | 'from' | 'to' | 'options'>,
): Promise<void> {
  const { storedSpans, clock } = ctx.services;
  const { cost, span } = priceRequest(
    request,
    todayEpochDay(clock()),
    request.slugs.map((slug) => storedSpans.of(request.metric.name, slug)),
  );
  await ctx.meter.charge(cost);
  const bytes = request.slugs.length * span.buckets * POINT_BYTES;
  if (bytes >= SMALL_ANSWER_BYTES) await ctx.reserveAnswer(bytes);
}
