import type { RankRequestField, RankRequestInput } from '../analytics/rank-request.js';
import type { TotalRequestField, TotalRequestInput } from '../analytics/total-request.js';
import type { MetricDefinition } from '../catalog/load-catalog.js';
import { COST_PARAMS, readParameters, REST_PARAMS } from './parse-query.js';

/** The REST parameter behind each field of a total request. */
export const TOTAL_PARAMS: Readonly<Record<TotalRequestField, string>> = {
  ...REST_PARAMS,
  group: 'group',
  op: 'op',
  requireComplete: 'require_complete',
};

/** The REST parameter behind each field of a ranking request. */
export const RANK_PARAMS: Readonly<Record<RankRequestField, string>> = {
  projects: 'project',
  from: 'start_date',
  to: 'end_date',
  aggregation: 'aggregation',
  asOf: 'as_of',
  vintage: 'vintage',
  lagDays: 'lag_days',
  limitPerProject: 'limit_per_project',
  group: 'group',
  by: 'by',
  order: 'order',
  top: 'top',
};

/** Reads `/v1/totals/<name>`'s parameters: a series request's, `group`, `op` and `require_complete`. */
export function parseTotalQuery(metric: MetricDefinition, rawQuery: string): TotalRequestInput {
  const seen = readParameters(rawQuery, [
    'project',
    'group',
    'start_date',
    'end_date',
    ...SHAPING_PARAMS,
    'op',
    'require_complete',
    ...COST_PARAMS,
  ]);
  return {
    metric,
    projects: seen.get('project')?.split(','),
    group: seen.get('group'),
    from: seen.get('start_date'),
    to: seen.get('end_date'),
    interval: seen.get('interval'),
    aggregation: seen.get('aggregation'),
    fill: seen.get('fill'),
    transform: seen.get('transform'),
    window: seen.get('window'),
    asOf: seen.get('as_of'),
    op: seen.get('op'),
    requireComplete: seen.get('require_complete'),
  };
}

/** Reads `/v1/rank/<name>`'s parameters. */
export function parseRankQuery(metric: MetricDefinition, rawQuery: string): RankRequestInput {
  const seen = readParameters(rawQuery, [...RANK_QUERY, ...COST_PARAMS]);
  return {
    metric,
    projects: seen.get('project')?.split(','),
    group: seen.get('group'),
    from: seen.get('start_date'),
    to: seen.get('end_date'),
    aggregation: seen.get('aggregation'),
    asOf: seen.get('as_of'),
    by: seen.get('by'),
    order: seen.get('order'),
    top: seen.get('top'),
  };
}

// Private

/** The series options a total takes: the extension parameters but the vintage, which totals do not read. */
const SHAPING_PARAMS = ['interval', 'aggregation', 'fill', 'transform', 'window', 'as_of'] as const;

/** The parameters of a ranking, in their documented order. */
const RANK_QUERY = [
  'project',
  'start_date',
  'end_date',
  'aggregation',
  'as_of',
  'group',
  'by',
  'order',
  'top',
] as const;
