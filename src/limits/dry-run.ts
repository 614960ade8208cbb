import type { IncomingHttpHeaders } from 'node:http';
import { ApiError } from '../api/api-error.js';
import { clipped } from '../clipped.js';

/** The REST query parameter that asks a series request's price instead of its answer. */
export const DRY_RUN_PARAM = 'dry_run';

/** The request header that asks a GraphQL request's price instead of its answer. */
export const DRY_RUN_HEADER = 'x-dry-run';

/**
 * Whether a request asks only its price: `dry_run=true` in its query (REST) or the header
 * `x-dry-run: true` (GraphQL). The app asks this before the key's unit is charged, so a dry
 * run takes nothing from the key's balance (rate-limiter.ts: a dry-run bucket of its own
 * bounds them). Most queries hold no `dry_run`, and then nothing is parsed.
 */
export function dryRunAsked(headers: IncomingHttpHeaders, query: string): boolean {
  if (headers[DRY_RUN_HEADER] === 'true') return true;
  return query.includes(DRY_RUN_PARAM) && new URLSearchParams(query).get(DRY_RUN_PARAM) === 'true';
}

/**
 * A dry-run flag's value: true for `true`, false for `false` or absent, else a 400 naming
 * `name` (the parameter or header that carried it).
 */
export function dryRunValue(name: string, value: string | undefined): boolean {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw new ApiError('bad-request', `${name}: expected true or false, got ${JSON.stringify(clipped(value))}`, {
    errors: [{ param: name, message: `expected true or false, got ${JSON.stringify(clipped(value))}` }],
  });
}
