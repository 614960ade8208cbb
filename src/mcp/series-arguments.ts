import { z } from 'zod';
import type { Catalog } from '../catalog/load-catalog.js';
import { AGGREGATIONS, FILLS, INTERVALS, MAX_WINDOW, TRANSFORMS } from '../series/series-options.js';
import { MAX_LAG_DAYS, VINTAGES } from '../series/vintage.js';
import {
  validateSeriesRequest,
  type SeriesRequest,
  type SeriesRequestField,
  type SeriesRequestInput,
} from '../series/series-request.js';
import { metricOf, optionalCount, optionalNames, optionalText, refuseUnknown } from './argument-checks.js';
import type { ToolArguments } from './tool.js';

/**
 * The series arguments of a tool, named as REST names its parameters so that a refusal reads
 * exactly as REST's problem detail (`start_date: …`).
 */
export const SERIES_ARGUMENT_NAMES: Readonly<Record<SeriesRequestField, string>> = {
  projects: 'project',
  from: 'start_date',
  to: 'end_date',
  interval: 'interval',
  aggregation: 'aggregation',
  fill: 'fill',
  transform: 'transform',
  window: 'window',
  asOf: 'as_of',
  vintage: 'vintage',
  lagDays: 'lag_days',
  limitPerProject: 'limit_per_project',
};

/** REST's parameter order, in which a request's query is written. */
const QUERY_ORDER = ['project', ...Object.values(SERIES_ARGUMENT_NAMES).slice(1)] as const;

/**
 * The series arguments as advertised: the option lists are the ones the shared validation
 * (SERIES_REQUEST_SCHEMA) takes, and a call is checked by that validation itself.
 */
export function seriesArgumentsSchema(catalog: Catalog) {
  const names = catalog.metrics.map((m) => m.name) as [string, ...string[]];
  return z.object({
    metric: z.enum(names).describe('The metric, as REST names it (list_metrics lists them).'),
    project: z
      .array(z.string())
      .optional()
      .describe(
        "Project slugs, in the order wanted (case-sensitive); omitted: all of the metric's projects where allowed.",
      ),
    start_date: z.iso.date().optional().describe('First day, YYYY-MM-DD, inclusive; omitted: the first stored day.'),
    end_date: z.iso.date().optional().describe('Last day, YYYY-MM-DD, inclusive; omitted: the last stored day.'),
    interval: z.enum(INTERVALS).optional().describe('UTC calendar buckets (ISO weeks from Monday); default day.'),
    aggregation: z
      .enum(AGGREGATIONS)
      .optional()
      .describe("How a bucket's days become one value; default the metric's."),
    fill: z.enum(FILLS).optional().describe('What a bucket without data becomes; default none.'),
    transform: z.enum(TRANSFORMS).optional().describe('A transform after buckets and fill.'),
    window: z.number().int().min(1).max(MAX_WINDOW).optional().describe('Buckets a moving_average spans (default 7).'),
    as_of: z
      .string()
      .optional()
      .describe('RFC 3339 instant, or YYYY-MM-DD for the end of that UTC day: the values as served then.'),
    vintage: z
      .enum(VINTAGES)
      .optional()
      .describe("Which of each day's values: latest (default), first_release, or known_after lag_days days later."),
    lag_days: z.number().int().min(0).max(MAX_LAG_DAYS).optional().describe('Days after each day, for known_after.'),
    limit_per_project: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe('Only the newest this many points (buckets) of each series; 1 gives the latest value.'),
  });
}

/** A call's series request, checked by the validation REST and GraphQL share; a 400 (404 for the metric) if not. */
export function readSeriesRequest(args: ToolArguments, catalog: Catalog, more: readonly string[] = []): SeriesRequest {
  refuseUnknown(args, ['metric', ...QUERY_ORDER, ...more]);
  const metric = metricOf(args, catalog.byName);
  const input: SeriesRequestInput = {
    metric,
    projects: optionalNames(args, 'project'),
    from: optionalText(args, 'start_date'),
    to: optionalText(args, 'end_date'),
    interval: optionalText(args, 'interval'),
    aggregation: optionalText(args, 'aggregation'),
    fill: optionalText(args, 'fill'),
    transform: optionalText(args, 'transform'),
    window: optionalCount(args, 'window'),
    asOf: optionalText(args, 'as_of'),
    vintage: optionalText(args, 'vintage'),
    lagDays: optionalCount(args, 'lag_days'),
    limitPerProject: optionalCount(args, 'limit_per_project'),
  };
  return validateSeriesRequest(input, SERIES_ARGUMENT_NAMES);
}

/**
 * The REST path and query of a call's series arguments, with `as_of` set to `asOf`:
 * `/v1/metrics/<metric>?project=a,b&…&as_of=…`. Values are percent-encoded but for the
 * commas and colons a query may hold, so the path reads as one would type it.
 */
export function restPathOf(args: ToolArguments, asOf: string | undefined): string {
  const pairs: string[] = [];
  for (const name of QUERY_ORDER) {
    const value = name === 'as_of' ? asOf : args[name];
    if (value === undefined || value === null) continue;
    const text = Array.isArray(value) ? value.join(',') : String(value);
    pairs.push(`${name}=${encodeURIComponent(text).replaceAll('%2C', ',').replaceAll('%3A', ':')}`);
  }
  return `/v1/metrics/${encodeURIComponent(String(args.metric))}?${pairs.join('&')}`;
}
