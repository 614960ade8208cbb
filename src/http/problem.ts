import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, ERROR_KINDS } from '../api/api-error.js';

/** The `type` URI of each kind of problem: stable, documented at /docs#problems. */
export function problemType(kind: keyof typeof ERROR_KINDS): string {
  return `/docs#problem-${kind}`;
}

/** RFC 9457 body of an ApiError; never includes the cause. */
export function toProblem(error: ApiError): Record<string, unknown> {
  const kind = ERROR_KINDS[error.kind];
  return {
    type: problemType(error.kind),
    title: kind.title,
    status: kind.status,
    detail: error.message,
    ...(error.errors.length > 0 ? { errors: error.errors } : {}),
  };
}

/** Writes an ApiError as `application/problem+json` with its extra headers. */
export function sendProblem(res: ServerResponse, error: ApiError, head = false): void {
  const body = JSON.stringify(toProblem(error));
  res.statusCode = error.status;
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.setHeader('content-type', 'application/problem+json');
  res.setHeader('cache-control', 'no-store');
  res.setHeader('content-length', Buffer.byteLength(body));
  res.end(head ? undefined : body);
}

/**
 * Writes an ApiError raised before Yoga ran (a rate limit refused at the door of
 * `/graphql`) as Yoga writes a resolver's: a GraphQL response with no data and the
 * error's `extensions.code`, under its own status and headers.
 */
export function sendGraphqlError(req: IncomingMessage, res: ServerResponse, error: ApiError): void {
  const body = JSON.stringify({ errors: [{ message: error.message, extensions: { code: ERROR_KINDS[error.kind].graphqlCode } }] });
  const accept = req.headers.accept ?? '';
  res.statusCode = error.status;
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.setHeader('content-type', accept.includes('application/graphql-response+json') ? 'application/graphql-response+json; charset=utf-8' : 'application/json; charset=utf-8');
  res.setHeader('cache-control', 'no-store');
  res.setHeader('content-length', Buffer.byteLength(body));
  res.end(req.method === 'HEAD' ? undefined : body);
}
