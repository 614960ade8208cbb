import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RateLimitMeter } from '../limits/rate-limiter.js';
import { ApiError } from '../api/api-error.js';
import { API_KEY_HEADER } from '../auth/api-keys.js';
import { readyDirectory } from '../api/unavailable.js';
import { readBody, sendFetchResponse, toFetchRequest } from '../http/fetch-bridge.js';
import type { ClientGone } from '../http/client-gone.js';
import { renderGraphqlError } from '../http/render-error.js';
import { writeParts } from '../http/send-json.js';
import type { Route } from '../http/route.js';
import type { Services } from '../services.js';
import { createGraphiqlPage } from './graphiql-page.js';
import { createSplices, type Splices } from './splice.js';
import { createGraphqlServer, type GraphqlServerContext } from './yoga.js';

type GraphqlServer = ReturnType<typeof createGraphqlServer>;

/**
 * `/graphql`: GraphiQL's page (a GET that asks for HTML and carries no query) is public;
 * every operation needs a key. Failures before Yoga runs (401, 413, 429, 503) and the
 * bodies and media types Yoga refuses (415, 406) are GraphQL responses too, with `extensions.code`.
 */
export function createGraphqlRoute(services: Services): Route {
  const yoga = createGraphqlServer(services);
  const sendGraphiqlPage = createGraphiqlPage();
  return {
    path: '/graphql',
    // Only the page itself is public: with GRAPHIQL=off a browser's GET is an API call, keyed.
    access: (req) => (isGraphiqlPageRequest(req, services) ? 'public' : 'keyed'),
    errors: renderGraphqlError,
    handle: async ({ req, res, signal, meter, caller }) => {
      const head = req.method === 'HEAD';
      // Yoga and the page build the request's URL from it: one that holds no host is the client's error.
      if (!isValidHost(req.headers.host)) throw new ApiError('bad-request', 'the Host header does not hold a host name (with an optional port)');
      if (isGraphiqlPageRequest(req, services)) {
        // The page runs inline scripts and workers from blobs, so only framing is restricted:
        // GraphiQL keeps the key in the browser, and a site framing it could make its user run queries.
        res.setHeader('content-security-policy', "frame-ancestors 'none'");
        return sendGraphiqlPage(req, res, await yoga.fetch(toFetchRequest(req, Buffer.alloc(0))), head);
      }
      const directory = readyDirectory(services.state);
      // The body is read here first, so the 1 MB limit stays ours.
      const body = req.method === 'GET' || head ? undefined : await readBody(req);
      const key = cacheKeyOf(req, body);
      const kept = key === undefined ? undefined : services.responseCache.get(key);
      // A kept answer charges what executing it did; when the key cannot cover that, the
      // document runs as usual, so the refusal is the same field error it would be uncached.
      if (kept !== undefined && (await covered(meter, kept.cost))) return sendBytesAs(res, kept.contentType, kept.body);
      const ticket = services.responseCache.ticket();
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
      // Points go into the answer as the database's bytes, here, after the rest is serialized.
      const splices = createSplices(true);
      const context: GraphqlServerContext & { splices: Splices } = {
        directory,
        signal,
        meter: counting,
        caller: caller?.id ?? 'anonymous',
        keyStillValid: () => stillValid(services, req.headers[API_KEY_HEADER]),
        reserveAnswer,
        splices,
      };
      try {
        const answer = await answerWithYoga(yoga, req, res, body, context, signal);
        // A subscription's events were written as they came.
        if (answer === 'streamed') return;
        // A large answer stays in parts, written as they are: joined, a 10 MB answer was a
        // second 10 MB in memory while it was written (docs/benchmarks.md, "GraphQL's large
        // answers in parts"). A small one is joined: one write is cheaper than several.
        const split = answer.bytes === undefined ? splices.toParts(answer.text!) : [answer.bytes];
        const length = split.reduce((n, part) => n + part.length, 0);
        const parts = split.length > 1 && length < JOIN_BELOW_BYTES ? [Buffer.concat(split, length)] : split;
        // Only whole successes are kept; an answer with errors may depend on more than the
        // data. Points never hold "errors", so the text around them tells. The joined copy is
        // made only for an answer the cache will keep: one too large for it would be dropped.
        if (key !== undefined && services.responseCache.keeps(key, length) && answer.status === 200 && answer.contentType.includes('json') && !(answer.text ?? answer.bytes!).includes('"errors":')) {
          services.responseCache.set(key, { body: parts.length === 1 ? parts[0]! : Buffer.concat(parts, length), contentType: answer.contentType, cost: counting.total }, ticket);
        }
        res.statusCode = answer.status;
        for (const [name, value] of answer.headers) res.setHeader(name, value);
        res.setHeader('content-length', length);
        if (head) res.end();
        else writeParts(res, parts);
      } finally {
        finished = true;
        for (const release of held) release();
      }
    },
  };
}

// Private

/** Answers smaller than this are written as one buffer, larger ones in their parts. */
const JOIN_BELOW_BYTES = 64 * 1024;

/** An answer ready to send: its text with splice markers, or its bytes as they are. */
interface GraphqlAnswer {
  status: number;
  /** Every header but content-length, named as Yoga names them. */
  headers: [string, string][];
  contentType: string;
  text?: string;
  bytes?: Buffer;
}

/**
 * Through Yoga: parse, validate and execute, or its refusal. Yoga's own Node entry
 * (whatwg-node's light Request, built from the node request's fields) rather than a Fetch
 * API Request of our own: 16% more GraphQL answers per second in the bench.
 */
async function answerWithYoga(yoga: GraphqlServer, req: IncomingMessage, res: ServerResponse, body: Buffer | undefined, context: GraphqlServerContext & { splices: Splices }, signal: ClientGone): Promise<GraphqlAnswer | 'streamed'> {
  // A HEAD is the GET it mirrors, answered without its body (the route leaves it out):
  // Yoga itself allows only GET and POST and refused a HEAD with a query with its 405.
  const method = req.method === 'HEAD' ? 'GET' : req.method;
  const request = { method, url: req.url, headers: req.headers, socket: req.socket, body: body?.length === 0 ? ' ' : body };
  const response = await yoga.handleNodeRequestAndResponse(request, res, context);
  if (response.status === 415 || response.status === 406) throw mediaTypeRefusal(req, response);
  const contentType = response.headers.get('content-type') ?? '';
  if (contentType.startsWith('text/event-stream')) {
    await sendFetchResponse(res, response, req.method === 'HEAD', signal);
    return 'streamed';
  }
  const headers: [string, string][] = [];
  response.headers.forEach((value, name) => {
    if (name.toLowerCase() !== 'content-length') headers.push([name, value]);
  });
  if (context.splices.size > 0) return { status: response.status, headers, contentType, text: await response.text() };
  return { status: response.status, headers, contentType, bytes: Buffer.from(await response.arrayBuffer()) };
}

/** Whether the key a request was let in with is still accepted (a revoked one is not). */
async function stillValid(services: Services, header: string | string[] | undefined): Promise<boolean> {
  return (await services.keys.verify(Array.isArray(header) ? undefined : header)) !== undefined;
}

/**
 * What a GraphQL answer depends on besides the data: the document, variables and
 * operation (the body) and the media type asked for. Keys and rate limits do not change
 * an answer. Only POSTed queries are kept; subscriptions (event streams) never are.
 */
function cacheKeyOf(req: IncomingMessage, body: Buffer | undefined): string | undefined {
  const accept = req.headers.accept ?? '';
  if (body === undefined || body.length === 0 || accept.includes('text/event-stream')) return undefined;
  return `${accept}\u0000${req.headers['content-type'] ?? ''}\u0000${body.toString('latin1')}`;
}

async function covered(meter: RateLimitMeter, cost: number): Promise<boolean> {
  try {
    if (cost > 0) await meter.charge(cost);
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.kind === 'rate-limited') return false;
    throw error;
  }
}

/** The meter, adding up what the resolvers charge, so a kept answer can charge the same again. */
function countCharges(meter: RateLimitMeter): RateLimitMeter & { total: number } {
  const counting = {
    total: 0,
    charge: async (cost: number) => {
      counting.total += cost;
      await meter.charge(cost);
    },
  };
  return counting;
}

/**
 * Yoga answers a body it has no parser for (415) and an `Accept` it cannot meet (406) with
 * an empty body; this is the same refusal as an error the route renders. A 406 is written
 * as `application/json`, which the client did not ask for (GraphQL over HTTP allows it).
 */
function mediaTypeRefusal(req: IncomingMessage, response: Response): ApiError {
  if (response.status === 415) {
    return new ApiError('unsupported-media-type', `a POST body must be ${BODY_TYPES}; the request sent ${req.headers['content-type'] ?? 'no content-type'}`);
  }
  // Yoga names what it could have sent in an `accept` header of its answer.
  const offered = (response.headers.get('accept') ?? '').replaceAll('; charset=utf-8', '');
  return new ApiError('not-acceptable', `the answer can be ${offered}; the request accepts ${req.headers.accept ?? 'nothing'}`);
}

/** The body types Yoga parses (its default request parsers). */
const BODY_TYPES = 'application/json (or application/graphql+json, application/graphql, application/x-www-form-urlencoded, multipart/form-data)';

function sendBytesAs(res: ServerResponse, contentType: string, body: Buffer): void {
  res.statusCode = 200;
  res.setHeader('content-type', contentType);
  res.setHeader('content-length', body.length);
  res.end(body);
}

function isValidHost(host: string | undefined): boolean {
  return host === undefined || (!/[/?#@\\]/.test(host) && URL.canParse(`http://${host}/`));
}

/** A browser opening the page, also from a shared link whose `?query=` the page puts in its editor; never with GRAPHIQL=off. */
function isGraphiqlPageRequest(req: IncomingMessage, { config }: Services): boolean {
  return config.graphiql && req.method === 'GET' && (req.headers.accept ?? '').includes('text/html');
}
