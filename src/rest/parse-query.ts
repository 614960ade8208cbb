import { ApiError, type ParamError } from '../api/api-error.js';
import type { MetricDefinition } from '../catalog/load-catalog.js';
import type { SeriesRequestField, SeriesRequestInput } from '../series/series-request.js';

/** The REST parameter behind each field of the shared request, as interface-v1.md names them. */
export const REST_PARAMS: Readonly<Record<SeriesRequestField, string>> = {
  projects: 'project',
  from: 'start_date',
  to: 'end_date',
};
const KNOWN = new Set(['project', 'start_date', 'end_date']);

/**
 * Reads `project`, `start_date` and `end_date` from a raw query string. Unknown and
 * repeated parameters are refused; `project` is split on commas with empty segments
 * kept, so the shared validation can name them.
 */
export function parseMetricQuery(metric: MetricDefinition, rawQuery: string): SeriesRequestInput {
  const params = new URLSearchParams(rawQuery);
  const errors: ParamError[] = [];
  const seen = new Map<string, string>();
  for (const [name, value] of params) {
    if (!KNOWN.has(name)) {
      errors.push({ param: shorten(name), message: `unknown parameter ${JSON.stringify(shorten(name))}; expected project, start_date or end_date` });
    } else if (seen.has(name)) {
      errors.push({ param: name, message: `${name} may be given once; join several projects with commas` });
    } else {
      seen.set(name, value);
    }
  }
  if (errors.length > 0) throw new ApiError('bad-request', describe(errors), { errors: capped(errors) });
  const project = seen.get('project');
  return {
    metric,
    projects: project === undefined ? undefined : project.split(','),
    from: seen.get('start_date'),
    to: seen.get('end_date'),
  };
}

/** A one-line summary of parameter errors for a problem's `detail`. */
export function describe(errors: readonly ParamError[]): string {
  const first = errors[0];
  if (first === undefined) return 'the request is invalid';
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more problem${errors.length > 2 ? 's' : ''})` : '';
  return `${first.param}: ${first.message}${more}`;
}

// Private

/** At most this many parameter errors are itemised, so a hostile URL cannot inflate the answer. */
const MAX_REPORTED_ERRORS = 5;

function capped(errors: ParamError[]): ParamError[] {
  if (errors.length <= MAX_REPORTED_ERRORS) return errors;
  const rest = errors.length - MAX_REPORTED_ERRORS;
  return [...errors.slice(0, MAX_REPORTED_ERRORS), { param: 'query', message: `and ${rest} more problem${rest > 1 ? 's' : ''} with the parameters` }];
}

function shorten(text: string): string {
  return text.length > 64 ? `${text.slice(0, 64)}…` : text;
}
