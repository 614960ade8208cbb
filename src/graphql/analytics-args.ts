import type { TotalRequestField } from '../analytics/total-request.js';
import type { RankRequestField } from '../analytics/rank-request.js';

/** A field's arguments as the shared validation reads them: each named as GraphQL names it. */
export const TOTAL_ARGS: Readonly<Record<TotalRequestField, string>> = {
  projects: 'projects',
  from: 'from',
  to: 'to',
  interval: 'interval',
  aggregation: 'aggregation',
  fill: 'fill',
  transform: 'transform',
  window: 'window',
  asOf: 'asOf',
  vintage: 'vintage',
  lagDays: 'lagDays',
  limitPerProject: 'limitPerProject',
  group: 'group',
  op: 'op',
  requireComplete: 'requireComplete',
};

export const RANK_ARGS: Readonly<Record<RankRequestField, string>> = {
  projects: 'projects',
  from: 'from',
  to: 'to',
  aggregation: 'aggregation',
  asOf: 'asOf',
  vintage: 'vintage',
  lagDays: 'lagDays',
  limitPerProject: 'limitPerProject',
  group: 'group',
  by: 'by',
  order: 'order',
  top: 'top',
};

/** An argument given as null is absent, as in the `metric` field. */
export function given<T>(value: T | null | undefined): T | undefined {
  return value ?? undefined;
}
