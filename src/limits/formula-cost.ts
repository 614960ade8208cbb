import { formulaInputRequests } from '../formula/formula-plan.js';
import type { SeriesRequest } from '../series/series-request.js';
import { priceRequest, type PricedRequest, type StoredSpan } from './request-cost.js';

/**
 * What any series request costs (see {@link priceRequest}): a stored metric's as its
 * series are priced; a formula's (a derived metric or a formula request) as the sum of its
 * inputs, each priced as the series request that reads it, sized by the widest of them.
 *
 * @param spanOf a series' stored span (StoredSpans.of).
 */
export function priceSeriesRequest(
  request: Pick<SeriesRequest, 'metric' | 'slugs' | 'from' | 'to' | 'options' | 'limitPerProject'>,
  today: number,
  spanOf: (metric: string, slug: string) => StoredSpan | undefined,
): PricedRequest {
  const prices = formulaInputRequests(request).map((input) =>
    priceRequest(
      input,
      today,
      input.slugs.map((slug) => spanOf(input.metric.name, slug)),
    ),
  );
  if (prices.length === 1) return prices[0]!;
  return {
    cost: prices.reduce((units, price) => units + price.cost, 0),
    span: {
      days: Math.max(...prices.map((p) => p.span.days)),
      warmUpDays: Math.max(...prices.map((p) => p.span.warmUpDays)),
      buckets: Math.max(...prices.map((p) => p.span.buckets)),
    },
  };
}
