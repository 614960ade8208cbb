/** SQLSTATE classes and driver codes that mean "the database is away or too slow", not "the query is wrong". */
const UNAVAILABLE_SQLSTATE = /^(08|53|57)/;
const UNAVAILABLE_DRIVER_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'INCOMPLETE_RESULT',
]);

/**
 * A result that arrived with rows missing: seen from the driver's cursor when a statement
 * is cancelled (timeout or a client leaving) in the middle of a batch. Treated like the
 * database going away: the answer cannot be completed.
 */
export class IncompleteResultError extends Error {
  readonly code = 'INCOMPLETE_RESULT';

  constructor() {
    super('the database ended a result early');
    this.name = 'IncompleteResultError';
  }
}

/**
 * True when a store error should be answered with 503 and a retry hint: the server is
 * unreachable, restarting, out of connections, or the statement hit its timeout.
 */
export function isUnavailableError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return false;
  return UNAVAILABLE_SQLSTATE.test(code) || UNAVAILABLE_DRIVER_CODES.has(code);
}
