import { ApiError, type ParamError } from '../api/api-error.js';
import type { MetricDefinition } from '../catalog/load-catalog.js';
import type { SeriesRequestField, SeriesRequestInput } from '../series/series-request.js';
import { clipped } from '../clipped.js';
import { counted } from '../counted.js';

/** The REST parameter behind each field of the shared request: interface-v1.md's three, then the extensions. */
export const REST_PARAMS: Readonly<Record<SeriesRequestField, string>> = {
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

/** The extension parameters: optional, and a request without them is answered exactly as the contract's. */
export const EXTENSION_PARAMS = [
  'interval',
  'aggregation',
  'fill',
  'transform',
  'window',
  'as_of',
  'vintage',
  'lag_days',
  'limit_per_project',
] as const;

/** Parameters every series path takes besides its own: `dry_run` asks only the request's price (dry-run-answer.ts). */
export const COST_PARAMS = ['dry_run'] as const;

/**
 * Reads a metric request's parameters from a raw query string. Unknown and repeated
 * parameters are refused; `project` is split on commas with empty segments kept, so the
 * shared validation can name them.
 */
export function parseMetricQuery(metric: MetricDefinition, rawQuery: string): SeriesRequestInput {
  const seen = readParameters(rawQuery, ['project', 'start_date', 'end_date', ...EXTENSION_PARAMS, ...COST_PARAMS]);
  const project = seen.get('project');
  return {
    metric,
    projects: project === undefined ? undefined : project.split(','),
    from: seen.get('start_date'),
    to: seen.get('end_date'),
    interval: seen.get('interval'),
    aggregation: seen.get('aggregation'),
    fill: seen.get('fill'),
    transform: seen.get('transform'),
    window: seen.get('window'),
    asOf: seen.get('as_of'),
    vintage: seen.get('vintage'),
    lagDays: seen.get('lag_days'),
    limitPerProject: seen.get('limit_per_project'),
  };
}

/**
 * The parameters of a query string by name, each given at most once and all among
 * `known`; otherwise a 400 naming the unknown or repeated ones (at most five itemised).
 */
export function readParameters(rawQuery: string, known: readonly string[]): Map<string, string> {
  const errors: ParamError[] = [];
  const seen = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(rawQuery)) {
    if (!known.includes(name)) {
      const expected = known.length > 0 ? known.join(', ') : 'none';
      const message = `unknown parameter ${JSON.stringify(clipped(name))}; expected ${expected}`;
      errors.push({ param: clipped(name), message });
    } else if (seen.has(name)) {
      errors.push({
        param: name,
        message:
          `${name} may be given once` +
          `${name === 'project' || name === 'metric' ? '; join several with commas' : ''}`,
      });
    } else {
      seen.set(name, value);
    }
  }
  if (errors.length > 0) throw new ApiError('bad-request', describe(errors), { errors: capped(errors) });
  return seen;
}

// Private

/** A one-line summary of parameter errors for a problem's `detail`. */
function describe(errors: readonly ParamError[]): string {
  const first = errors[0];
  if (first === undefined) return 'the request is invalid';
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more problem${errors.length > 2 ? 's' : ''})` : '';
  return `${first.param}: ${first.message}${more}`;
}

/** At most this many parameter errors are itemised, so a hostile URL cannot inflate the answer. */
const MAX_REPORTED_ERRORS = 5;

function capped(errors: ParamError[]): ParamError[] {
  if (errors.length <= MAX_REPORTED_ERRORS) return errors;
  const rest = errors.length - MAX_REPORTED_ERRORS;
  return [
    ...errors.slice(0, MAX_REPORTED_ERRORS),
    { param: 'query', message: `and ${counted(rest, 'more problem')} with the parameters` },
  ];
}
