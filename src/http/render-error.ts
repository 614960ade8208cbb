import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, ERROR_KINDS, type ErrorKind } from '../api/api-error.js';
import { acceptsMediaType } from './media-type.js';

/** Writes an ApiError as a complete answer in one API's error format. */
export type ErrorRenderer = (req: IncomingMessage, res: ServerResponse, error: ApiError) => void;

/** The `type` URI of each kind of problem: stable, documented at /docs#problem-<kind>. */
export function problemType(kind: ErrorKind): string {
  return `/docs#problem-${kind}`;
}

/** RFC 9457 body of an ApiError; never includes the cause. */
function toProblem(error: ApiError): Record<string, unknown> {
  const kind = ERROR_KINDS[error.kind];
  return {
    type: problemType(error.kind),
    title: kind.title,
    status: kind.status,
    detail: error.message,
    ...(error.errors.length > 0 ? { errors: error.errors } : {}),
  };
}

/** `/v1` and every other path: `application/problem+json`. */
export const renderProblem: ErrorRenderer = (req, res, error) => {
  send(req, res, error, 'application/problem+json', JSON.stringify(toProblem(error)));
};

/**
 * `/graphql`: a GraphQL response with no data and one error carrying `extensions.code`
 * (and the parameter errors of a 400), under the error's own status and headers, as
 * GraphQL over HTTP asks of request errors. `application/graphql-response+json` when the
 * client accepts it, `application/json` otherwise.
 */
export const renderGraphqlError: ErrorRenderer = (req, res, error) => {
  send(req, res, error, graphqlMediaType(req.headers.accept), JSON.stringify(toGraphqlErrorBody(error)));
};

/** The body `renderGraphqlError` writes. */
function toGraphqlErrorBody(error: ApiError): { errors: Record<string, unknown>[] } {
  const extensions = {
    code: ERROR_KINDS[error.kind].graphqlCode,
    ...(error.errors.length > 0 ? { errors: error.errors } : {}),
  };
  return { errors: [{ message: error.message, extensions }] };
}

/** The GraphQL response media type for an `Accept` header, with its charset. */
function graphqlMediaType(accept: string | undefined): string {
  return acceptsMediaType(accept, 'application/graphql-response+json')
    ? 'application/graphql-response+json; charset=utf-8'
    : 'application/json; charset=utf-8';
}

/**
 * The raw HTTP/1.1 answer to a request Node refused before any listener saw it: a 431
 * when its header fields (the URL included) are over the limit, a 400 when it is not
 * valid HTTP/1.1 (a byte a request line may not hold, a malformed header field). In the
 * error format of the path its request line names, and the connection closed.
 */
export function rawRequestError(
  parserCode: string | undefined,
  requestStart: Buffer | undefined,
  limitBytes: number,
): string {
  const error =
    parserCode === 'HPE_HEADER_OVERFLOW'
      ? new ApiError('header-too-large', `the request line and header fields are limited to ${limitBytes} bytes`)
      : new ApiError(
          'bad-request',
          'the request is not valid HTTP/1.1: its request line or a header field ' +
            'holds what HTTP does not allow (URLs are percent-encoded ASCII)',
        );
  const head = requestStart?.subarray(0, 64).toString('latin1') ?? '';
  const graphql = /^[A-Z]+ \/graphql[?\s/]/.test(head);
  const body = graphql ? JSON.stringify(toGraphqlErrorBody(error)) : JSON.stringify(toProblem(error));
  const type = graphql ? 'application/json; charset=utf-8' : 'application/problem+json';
  return [
    `HTTP/1.1 ${error.status} ${ERROR_KINDS[error.kind].title}`,
    `content-type: ${type}`,
    'x-content-type-options: nosniff',
    'cache-control: no-store',
    `content-length: ${Buffer.byteLength(body)}`,
    'connection: close',
    '',
    body,
  ].join('\r\n');
}

// Private

function send(req: IncomingMessage, res: ServerResponse, error: ApiError, type: string, body: string): void {
  res.statusCode = error.status;
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.setHeader('content-type', type);
  res.setHeader('cache-control', 'no-store');
  res.setHeader('content-length', Buffer.byteLength(body));
  res.end(req.method === 'HEAD' ? undefined : body);
}
