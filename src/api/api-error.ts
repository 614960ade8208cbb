/**
 * The kinds of failure a client can see, each with its HTTP status, a title for
 * problem+json (`/v1`) and the `extensions.code` of a GraphQL error (`/graphql`).
 */
export const ERROR_KINDS = {
  'bad-request': { status: 400, title: 'Bad Request', graphqlCode: 'BAD_USER_INPUT' },
  unauthorized: { status: 401, title: 'Unauthorized', graphqlCode: 'UNAUTHENTICATED' },
  'not-found': { status: 404, title: 'Not Found', graphqlCode: 'NOT_FOUND' },
  'method-not-allowed': { status: 405, title: 'Method Not Allowed', graphqlCode: 'METHOD_NOT_ALLOWED' },
  'not-acceptable': { status: 406, title: 'Not Acceptable', graphqlCode: 'NOT_ACCEPTABLE' },
  'payload-too-large': { status: 413, title: 'Content Too Large', graphqlCode: 'PAYLOAD_TOO_LARGE' },
  'unsupported-media-type': { status: 415, title: 'Unsupported Media Type', graphqlCode: 'UNSUPPORTED_MEDIA_TYPE' },
  'rate-limited': { status: 429, title: 'Too Many Requests', graphqlCode: 'RATE_LIMITED' },
  'header-too-large': {
    status: 431,
    title: 'Request Header Fields Too Large',
    graphqlCode: 'REQUEST_HEADER_FIELDS_TOO_LARGE',
  },
  internal: { status: 500, title: 'Internal Server Error', graphqlCode: 'INTERNAL_SERVER_ERROR' },
  unavailable: { status: 503, title: 'Service Unavailable', graphqlCode: 'SERVICE_UNAVAILABLE' },
} as const;

export type ErrorKind = keyof typeof ERROR_KINDS;

/** One problem with one request parameter. */
export interface ParamError {
  param: string;
  message: string;
}

/**
 * An error meant for the client: its `detail` and `errors` are safe to show. The
 * `cause` (a driver error, say) is kept for logs and never serialized. Both APIs render
 * it: `/v1` as problem+json, `/graphql` as a GraphQL error with `extensions.code`.
 */
export class ApiError extends Error {
  readonly kind: ErrorKind;
  readonly errors: readonly ParamError[];
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    kind: ErrorKind,
    detail: string,
    options: { errors?: readonly ParamError[]; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(detail, { cause: options.cause });
    this.name = 'ApiError';
    this.kind = kind;
    this.errors = options.errors ?? [];
    this.headers = options.headers ?? {};
  }

  get status(): number {
    return ERROR_KINDS[this.kind].status;
  }
}

/** A problem a request schema found, as zod and any other Standard Schema library reports it. */
export interface RequestIssue {
  readonly message: string;
  readonly path?: readonly (PropertyKey | { readonly key: PropertyKey })[] | undefined;
}

/** One 400 for problems with parameters: each itemised in `errors`, and all of them in the detail. */
export function paramsError(errors: readonly ParamError[]): ApiError {
  return new ApiError('bad-request', errors.map((e) => `${e.param}: ${e.message}`).join('; '), { errors });
}

/**
 * One 400 for a request schema's issues. Each names its parameter by the first key of its
 * path, in the caller's words where `names` has them (REST's `start_date` for `from`);
 * an issue of the whole request names `request`.
 */
export function issuesError(issues: readonly RequestIssue[], names?: Readonly<Record<string, string>>): ApiError {
  return paramsError(issues.map((issue) => ({ param: paramOf(issue, names), message: issue.message })));
}

// Private

function paramOf(issue: RequestIssue, names: Readonly<Record<string, string>> | undefined): string {
  const first = issue.path?.[0];
  const key = typeof first === 'object' ? first.key : first;
  if (typeof key !== 'string') return 'request';
  if (names === undefined) return key;
  return Object.hasOwn(names, key) ? names[key]! : 'request';
}
