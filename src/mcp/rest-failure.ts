import { ApiError, ERROR_KINDS, type ErrorKind } from '../api/api-error.js';
import type { RestAnswer } from './mcp-services.js';

/**
 * A REST answer that is not a 200, as the ApiError REST threw: its kind from the status and
 * its problem's `detail` (and `errors`), so a tool error reads exactly as REST's problem.
 */
export function failedRest(answer: RestAnswer): ApiError {
  const kind = (Object.keys(ERROR_KINDS) as ErrorKind[]).find((k) => ERROR_KINDS[k].status === answer.status);
  let problem: { detail?: unknown; errors?: unknown } = {};
  try {
    problem = JSON.parse(answer.body.toString('utf8')) as typeof problem;
  } catch {
    // Not a problem document: described by its status alone.
  }
  const detail = typeof problem.detail === 'string' ? problem.detail : `the REST request failed with ${answer.status}`;
  const retry = answer.headers['retry-after'];
  return new ApiError(kind ?? 'internal', detail, {
    errors: Array.isArray(problem.errors) ? problem.errors : [],
    headers: retry === undefined ? {} : { 'retry-after': String(retry) },
  });
}
