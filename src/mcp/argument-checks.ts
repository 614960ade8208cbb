import { ApiError, paramsError } from '../api/api-error.js';
import { clipped } from '../clipped.js';

/**
 * Checks of a tool call's raw arguments before the shared validation sees them, worded as
 * REST words its parameters' problems: an unknown argument is refused, naming the known ones.
 */
export function refuseUnknown(args: Readonly<Record<string, unknown>>, known: readonly string[]): void {
  const unknown = Object.keys(args).filter((name) => !known.includes(name));
  if (unknown.length === 0) return;
  const expected = known.length > 0 ? known.join(', ') : 'none';
  throw paramsError(
    unknown.slice(0, 5).map((name) => ({
      param: clipped(name),
      message: `unknown parameter ${JSON.stringify(clipped(name))}; expected ${expected}`,
    })),
  );
}

/** A text argument, or undefined when absent (or null). */
export function optionalText(args: Readonly<Record<string, unknown>>, name: string): string | undefined {
  const value = args[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  throw wrongType(name, 'a string', value);
}

/** A whole number given as a number or as text (the shared validation checks its range). */
export function optionalCount(args: Readonly<Record<string, unknown>>, name: string): number | string | undefined {
  const value = args[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number' || typeof value === 'string') return value;
  throw wrongType(name, 'a whole number', value);
}

/** A list of names: an array of strings, or one string of names joined with commas as REST takes it. */
export function optionalNames(args: Readonly<Record<string, unknown>>, name: string): string[] | undefined {
  const value = args[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value.split(',');
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.flatMap((v) => v.split(','));
  throw wrongType(name, 'an array of strings', value);
}

/** The metric a tool is asked about: a catalog name, else REST's 404 for an unknown metric (a 400 when absent). */
export function metricOf<M>(args: Readonly<Record<string, unknown>>, byName: ReadonlyMap<string, M>): M {
  const name = optionalText(args, 'metric');
  if (name === undefined)
    throw paramsError([{ param: 'metric', message: 'name the metric; GET /v1/metrics lists them' }]);
  const metric = byName.get(name);
  if (metric === undefined)
    throw new ApiError('not-found', `unknown metric ${JSON.stringify(clipped(name))}; GET /v1/metrics lists them`);
  return metric;
}

// Private

function wrongType(name: string, expected: string, value: unknown): ApiError {
  const got = clipped(JSON.stringify(value) ?? String(value));
  return paramsError([{ param: name, message: `expected ${expected}, got ${got}` }]);
}
