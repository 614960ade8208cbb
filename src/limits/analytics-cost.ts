import type { RankRequest } from '../analytics/rank-request.js';
import type { TotalRequest } from '../analytics/total-request.js';
import { priceRequest, type PricedRequest, type StoredSpan } from './request-cost.js';

/**
 * What a total costs: its members' series, priced as a series request for them would be
 * (the combined answer is smaller, but every member's days are read and bucketed).
 *
 * @param stored each member's stored span, in the order of `request.series.slugs`.
 */
export function priceTotal(
  request: TotalRequest,
  today: number,
  stored: readonly (StoredSpan | undefined)[],
): PricedRequest {
  return priceRequest(request.series, today, stored);
}

/**
 * What a ranking costs: the days its windows read of each member (from the earliest
 * window's first day to the last day), priced as a yearly series of that span, since it
 * answers one value per member and window.
 *
 * @param stored each member's stored span, in the order of `request.series.slugs`.
 */
export function priceRanking(
  request: RankRequest,
  today: number,
  stored: readonly (StoredSpan | undefined)[],
): PricedRequest {
  const read = {
    slugs: request.series.slugs,
    from: (request.prior ?? request.previous).from,
    to: request.current.to,
    options: {
      interval: 'year',
      aggregation: request.series.options.aggregation,
      fill: 'none',
      transform: null,
      window: null,
    },
  } as const;
  return priceRequest(read, today, stored);
}
