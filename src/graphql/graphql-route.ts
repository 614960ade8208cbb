import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../api/api-error.js';
import { API_KEY_HEADER } from '../auth/api-keys.js';
import { readyDirectory } from '../api/unavailable.js';
import { countCharges, lookUpAnswer } from '../cache/answer-keeper.js';
import { readBody, toFetchRequest } from '../http/fetch-bridge.js';
import { DRY_RUN_HEADER, dryRunValue } from '../limits/dry-run.js';
import { acceptsMediaType, normalizedContentType } from '../http/media-type.js';
import { renderGraphqlError } from '../http/render-error.js';
import { sendEvents, sendWhole } from '../http/send-json.js';
import type { Route } from '../http/route.js';
import type { GraphqlServices } from './graphql-services.js';
import { createGraphiqlPage } from './graphiql-page.js';
import { createSplices } from './splice.js';
import { createGraphqlServer, type ExecutionOutcome, type GraphqlServerContext } from './yoga.js';

type GraphqlServer = ReturnType<typeof createGraphqlServer>;

/**
 * `/graphql`: GraphiQL's page (a GET that asks for HTML and carries no query) is public;
 * every operation needs a key. Failures before Yoga runs (401, 413, 429, 503) and the
 * bodies and media types Yoga refuses (415, 406) are GraphQL responses too, with `extensions.code`.
 */
export function createGraphqlRoute(services: GraphqlServices): Route<GraphqlServices> {
  const yoga = createGraphqlServer(services);
  const sendGraphiqlPage = createGraphiqlPage(services);
  return {
    path: '/graphql',
    // Only the page itself is public: with GRAPHIQL=off a browser's GET is an API call, keyed.
    access: (req) => (isGraphiqlPageRequest(req, services) ? 'public' : 'keyed'),
    errors: renderGraphqlError,
    dryRun: true,
    handle: async ({ req, res, signal, meter, caller }) => {
      const head = req.method === 'HEAD';
      // Yoga and the page build the request's URL from it: one that holds no host is the client's error.
      if (!isValidHost(req.headers.host))
        throw new ApiError('bad-request', 'the Host header does not hold a host name (with an optional port)');
      if (isGraphiqlPageRequest(req, services)) {
        // The page runs inline scripts, so only framing is restricted:
        // GraphiQL keeps the key in the browser, and a site framing it could make its user run queries.
        res.setHeader('content-security-policy', "frame-ancestors 'none'");
        return sendGraphiqlPage(req, res, () => yoga.fetch(toFetchRequest(req, Buffer.alloc(0))));
      }
      const dryRun = dryRunValue(DRY_RUN_HEADER, headerValue(req.headers[DRY_RUN_HEADER]));
      const directory = readyDirectory(services.state);
      // The body is read here first, so the 1 MB limit stays ours.
      const body = req.method === 'GET' || head ? undefined : await readBody(req);
      // Yoga compares media types as written; RFC 9110 has them case-insensitive, with optional spaces.
      const contentType = normalizedContentType(req.headers['content-type']);
      // A dry run is never answered from the cache nor kept: its answer is a price, not the data.
      const cacheKey = dryRun ? undefined : cacheKeyOf(req, contentType, body);
      const keeper = await lookUpAnswer(services.responseCache, cacheKey, meter);
      if (keeper.kept !== undefined)
        return sendWhole(req, res, {
          headers: [['content-type', keeper.kept.contentType]],
          body: keeper.kept.body,
          compress: false,
        });
      const counting = countCharges(meter);
      // Given back when the response is sent. Yoga can answer before a resolver's wait
      // ends (the client left), so bytes granted after that are given back at once:
      // kept, they would have been lost to the budget for good.
      const held: (() => void)[] = [];
      let finished = false;
      const reserveAnswer = async (bytes: number) => {
        const release = await services.answerBudget.reserve(bytes, signal);
        if (finished) release();
        else held.push(release);
      };
      // Points go into the answer as the database's bytes, after the rest is serialized.
      const splices = createSplices({ asBytes: true });
      const outcome: ExecutionOutcome = { complete: false };
      const context: GraphqlServerContext = {
        directory,
        signal,
        meter: counting,
        caller: caller?.id ?? 'anonymous',
        keyStillValid: () => stillValid(services, req.headers[API_KEY_HEADER]),
        reserveAnswer,
        splices,
        outcome,
        dryRun,
      };
      try {
        const response = await runYoga(yoga, req, res, contentType, body, context);
        const answerType = response.headers.get('content-type') ?? '';
        // A subscription's events (or a query's, asked as an event stream or in parts) are written as they come.
        if (isStream(answerType) && !head) return await sendEvents(res, response, signal);
        const headers: [string, string][] = [];
        response.headers.forEach((value, name) => {
          if (name.toLowerCase() !== 'content-length') headers.push([name, value]);
        });
        // A large answer stays in parts, written as they are: joined, it would be a second copy in memory.
        const parts =
          splices.size > 0 ? splices.toParts(await response.text()) : [Buffer.from(await response.arrayBuffer())];
        const length = parts.reduce((n, part) => n + part.length, 0);
        // Only whole successes are kept: an answer with errors may depend on more than the data.
        if (outcome.complete && keeper.keeps(length)) {
          const whole = parts.length === 1 ? parts[0]! : Buffer.concat(parts, length);
          keeper.keep({ body: whole, contentType: answerType, cost: counting.total });
        }
        await sendWhole(req, res, { status: response.status, headers, body: parts, compress: false });
      } finally {
        finished = true;
        for (const release of held) release();
      }
    },
  };
}

// Private

/**
 * Through Yoga: parse, validate and execute, or its refusal. Yoga's own Node entry
 * (whatwg-node's light Request, built from the node request's fields): cheaper than a
 * Fetch API Request of our own.
 */
async function runYoga(
  yoga: GraphqlServer,
  req: IncomingMessage,
  res: ServerResponse,
  contentType: string | undefined,
  body: Buffer | undefined,
  context: GraphqlServerContext,
): Promise<Response> {
  // A HEAD is the GET it mirrors, answered without its body (the writer leaves it out):
  // Yoga itself allows only GET and POST and refused a HEAD with a query with its 405.
  const method = req.method === 'HEAD' ? 'GET' : req.method;
  const headers =
    contentType === req.headers['content-type'] ? req.headers : { ...req.headers, 'content-type': contentType };
  const request = { method, url: req.url, headers, socket: req.socket, body: body?.length === 0 ? ' ' : body };
  const response = await yoga.handleNodeRequestAndResponse(request, res, context);
  if (response.status === 415 || response.status === 406) throw mediaTypeRefusal(req, response);
  return response;
}

/** A header field's value, repeated ones joined with commas (which no flag accepts). */
function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(',') : value;
}

/** Whether the key a request was let in with is still accepted (a revoked one is not). */
async function stillValid(services: GraphqlServices, header: string | string[] | undefined): Promise<boolean> {
  return (await services.keys.verify(Array.isArray(header) ? undefined : header)) !== undefined;
}

/**
 * What a GraphQL answer depends on besides the data: the URL, the document, variables and
 * operation (the body) and the media type asked for. Keys and rate limits do not change an
 * answer. Only POSTed queries are kept; subscriptions (event streams) never are.
 */
function cacheKeyOf(
  req: IncomingMessage,
  contentType: string | undefined,
  body: Buffer | undefined,
): string | undefined {
  const accept = req.headers.accept ?? '';
  if (req.method !== 'POST' || body === undefined || body.length === 0) return undefined;
  if (acceptsMediaType(accept, 'text/event-stream')) return undefined;
  // A point's status and a series' freshness change with the clock, not only with writes.
  if (CLOCK_FIELDS.test(body.toString('latin1'))) return undefined;
  return `${req.url}\u0000${accept}\u0000${contentType ?? ''}\u0000${body.toString('latin1')}`;
}

/** Words of a document that may select a field judged by the clock: such answers are not kept. */
const CLOCK_FIELDS = /\b(status|freshness)\b/;

/** Answers Yoga writes as they come: an event stream, or multipart parts. Copied as they are, never kept. */
function isStream(contentType: string): boolean {
  return contentType.startsWith('text/event-stream') || contentType.startsWith('multipart/mixed');
}

/**
 * Yoga answers a body it has no parser for (415) and an `Accept` it cannot meet (406) with
 * an empty body; this is the same refusal as an error the route renders. A 406 is written
 * as `application/json`, which the client did not ask for (GraphQL over HTTP allows it).
 */
function mediaTypeRefusal(req: IncomingMessage, response: Response): ApiError {
  if (response.status === 415) {
    return new ApiError(
      'unsupported-media-type',
      `a POST body must be ${BODY_TYPES}; the request sent ${req.headers['content-type'] ?? 'no content-type'}`,
    );
  }
  // Yoga names what it could have sent in an `accept` header of its answer.
  const offered = (response.headers.get('accept') ?? '').replaceAll('; charset=utf-8', '');
  return new ApiError(
    'not-acceptable',
    `the answer can be ${offered}; the request accepts ${req.headers.accept ?? 'nothing'}`,
  );
}

/** The body types Yoga parses (its default request parsers). */
const BODY_TYPES =
  'application/json (or application/graphql+json, application/graphql, application/x-www-form-urlencoded, ' +
  'multipart/form-data)';

function isValidHost(host: string | undefined): boolean {
  return host === undefined || (!/[/?#@\\]/.test(host) && URL.canParse(`http://${host}/`));
}

/**
 * A browser opening the page, also from a shared link whose `?query=` the page puts in its editor; never with
 * GRAPHIQL=off.
 */
function isGraphiqlPageRequest(req: IncomingMessage, { config }: GraphqlServices): boolean {
  return config.graphiql && req.method === 'GET' && acceptsMediaType(req.headers.accept, 'text/html');
}
