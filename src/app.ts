import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError } from './api/api-error.js';
import inject from 'light-my-request';
import { authenticate, presentedKey } from './auth/authenticate.js';
import { createGraphiqlAssetRoute } from './graphql/graphiql-assets.js';
import { createGraphqlRoute } from './graphql/graphql-route.js';
import { ClientGone } from './http/client-gone.js';
import { applyCors } from './http/cors.js';
import { handleHealth, handleReady } from './ops/health-routes.js';
import { createRequestLog, type Outcome, type RequestLine } from './log.js';
import { handleMetrics } from './ops/metrics-route.js';
import { rawRequestError, renderProblem } from './http/render-error.js';
import { wasGivenUp } from './http/send-json.js';
import type { Access, Route, RouteCall } from './http/route.js';
import { dryRunAsked } from './limits/dry-run.js';
import { UNLIMITED_METER } from './limits/rate-limiter.js';
import { handleCatalog } from './rest/catalog-route.js';
import { handleChanges } from './rest/changes-route.js';
import { handleExport } from './rest/export-route.js';
import { handleHook, handleHookDeliveries, handleHookReplay, handleHooks } from './rest/hooks-route.js';
import { handleGroups } from './rest/groups-route.js';
import { handleRank } from './rest/rank-route.js';
import { handleTotal } from './rest/totals-route.js';
import { handleFormula } from './rest/formula-route.js';
import { handleDocsPage } from './pages/docs-page.js';
import { handleDocsMarkdown, handleLlmsText } from './pages/llms-txt.js';
import { createSchemaRoute } from './graphql/schema-route.js';
import { createMcpRoute } from './mcp/mcp-route.js';
import type { RunRest } from './mcp/mcp-services.js';
import { handleExploreAsset, handleExplorePage } from './pages/explore-page.js';
import { createMetricHandler } from './rest/metric-route.js';
import { handleProfile } from './rest/profile-route.js';
import { handleRevisions } from './rest/revisions-route.js';
import { handleOpenApi } from './rest/openapi-route.js';
import { handleUsage } from './rest/usage-route.js';
import type { Services } from './services.js';
import { clipped } from './clipped.js';

/** The whole HTTP service, independent of any socket: `main.ts` listens, tests call it in-process. */
export interface App {
  /** The `node:http` request listener: every route, its key check, rate limit, logging and errors. */
  listener(req: IncomingMessage, res: ServerResponse): void;
  /**
   * For the server's `clientError` event: Node refuses a request it cannot read (header
   * fields, the URL included, over `maxHeaderSize`; bytes HTTP does not allow) before any
   * listener runs; this answers it with a 431 or 400 in the error format of its path
   * instead of an empty body. A request that took too long gets Node's own 408.
   */
  clientError(error: Error & { code?: string; rawPacket?: Buffer }, socket: Duplex): void;
}

/** Node's default `maxHeaderSize`: a URL longer than this cannot be read. */
export const MAX_HEADER_BYTES = 16 * 1024;

/**
 * Builds the app: one route table, and one lifecycle for every request: a request id,
 * security headers, CORS, the key check and one unit of its rate limit on keyed routes,
 * the handler, one log line, and errors rendered by the route's API (problem+json on
 * `/v1`, GraphQL errors on `/graphql`).
 */
export function createApp(services: Services): App {
  const listener: App['listener'] = (req, res) => serve(services, routes, logRequest, req, res);
  const routes = createRouteTable(createRoutes(services, createRestRunner(listener)));
  const logRequest = createRequestLog(services.logger);
  return {
    listener,
    clientError: (error, socket) => {
      if (!socket.writable) return;
      if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT')
        socket.end('HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
      else socket.end(rawRequestError(error.code, error.rawPacket, MAX_HEADER_BYTES));
    },
  };
}

// Private

const READ = ['GET', 'HEAD'] as const;
const HOOK = [...READ, 'PATCH', 'DELETE'] as const;

/** The service's routes. A new route is one line here. */
function createRoutes(services: Services, runRest: RunRest): Route<Services>[] {
  return [
    { path: '/healthz', access: 'public', methods: READ, errors: renderProblem, handle: handleHealth },
    { path: '/readyz', access: 'public', methods: READ, errors: renderProblem, handle: handleReady },
    { path: '/docs', access: 'public', methods: READ, errors: renderProblem, handle: handleDocsPage },
    { path: '/docs.md', access: 'public', methods: READ, errors: renderProblem, handle: handleDocsMarkdown },
    { path: '/llms.txt', access: 'public', methods: READ, errors: renderProblem, handle: handleLlmsText },
    ...(services.config.metrics === 'off'
      ? []
      : [
          {
            path: '/metrics',
            access: services.config.metrics === 'public' ? 'public' : 'keyed',
            methods: READ,
            errors: renderProblem,
            handle: handleMetrics,
          } satisfies Route<Services>,
        ]),
    ...(services.config.explorer
      ? ([
          { path: '/explore', access: 'public', methods: READ, errors: renderProblem, handle: handleExplorePage },
          {
            path: '/explore/:name',
            access: 'public',
            methods: READ,
            errors: renderProblem,
            handle: handleExploreAsset,
          },
        ] satisfies Route<Services>[])
      : []),
    createGraphqlRoute(services),
    ...(services.config.graphiql ? [createGraphiqlAssetRoute(services)] : []),
    createSchemaRoute(services.catalog),
    { path: '/v1/openapi.json', access: 'keyed', methods: READ, errors: renderProblem, handle: handleOpenApi },
    { path: '/v1/metrics', access: 'keyed', methods: READ, errors: renderProblem, handle: handleCatalog },
    {
      path: '/v1/metrics/:name',
      access: 'keyed',
      methods: READ,
      errors: renderProblem,
      handle: createMetricHandler(),
      dryRun: true,
    },
    { path: '/v1/export', access: 'keyed', methods: READ, errors: renderProblem, handle: handleExport, dryRun: true },
    { path: '/v1/changes', access: 'keyed', methods: READ, errors: renderProblem, handle: handleChanges },
    { path: '/v1/usage', access: 'keyed', methods: READ, errors: renderProblem, handle: handleUsage },
    createMcpRoute(services, runRest),
    { path: '/v1/hooks', access: 'keyed', methods: [...READ, 'POST'], errors: renderProblem, handle: handleHooks },
    { path: '/v1/hooks/:name', access: 'keyed', methods: HOOK, errors: renderProblem, handle: handleHook },
    {
      path: '/v1/hooks/:name/deliveries',
      access: 'keyed',
      methods: READ,
      errors: renderProblem,
      handle: handleHookDeliveries,
    },
    {
      path: '/v1/hooks/:name/replay',
      access: 'keyed',
      methods: ['POST'],
      errors: renderProblem,
      handle: handleHookReplay,
    },
    {
      path: '/v1/revisions/:name',
      access: 'keyed',
      methods: READ,
      errors: renderProblem,
      dryRun: true,
      handle: handleRevisions,
    },
    {
      path: '/v1/metrics/:name/profile',
      access: 'keyed',
      methods: READ,
      errors: renderProblem,
      dryRun: true,
      handle: handleProfile,
    },
    { path: '/v1/groups', access: 'keyed', methods: READ, errors: renderProblem, handle: handleGroups },
    {
      path: '/v1/totals/:name',
      access: 'keyed',
      methods: READ,
      errors: renderProblem,
      dryRun: true,
      handle: handleTotal,
    },
    { path: '/v1/rank/:name', access: 'keyed', methods: READ, errors: renderProblem, dryRun: true, handle: handleRank },
    { path: '/v1/formula', access: 'keyed', methods: READ, errors: renderProblem, dryRun: true, handle: handleFormula },
  ];
}

/**
 * Runs a REST GET through this app's own listener, in-process (no socket): MCP's tool calls
 * are REST requests, with REST's key check, pricing, response cache and errors. The body comes
 * uncompressed.
 */
function createRestRunner(listener: App['listener']): RunRest {
  return async (pathAndQuery, key, remoteAddress) => {
    const answer = await inject(listener, {
      method: 'GET',
      url: pathAndQuery,
      headers: { 'x-api-key': key },
      ...(remoteAddress === undefined ? {} : { remoteAddress }),
    });
    return { status: answer.statusCode, headers: answer.headers, body: answer.rawPayload };
  };
}

/** Any other `/v1` path: still keyed (nothing about the API is told to a caller without a key), then 404. */
const UNKNOWN_V1: Route<Services> = { path: 'unmatched', access: 'keyed', errors: renderProblem, handle: notFound };
const UNKNOWN: Route<Services> = { path: 'unmatched', access: 'public', errors: renderProblem, handle: notFound };

interface RouteTable {
  /** The route for a path and the value of its `:name` segment. */
  match(path: string): { route: Route<Services>; param: string };
}

function createRouteTable(routes: readonly Route<Services>[]): RouteTable {
  const fixed = new Map(routes.filter((r) => !r.path.includes(NAME)).map((r) => [r.path, r]));
  const named = routes
    .filter((r) => r.path.includes(NAME))
    .map((route) => {
      const at = route.path.indexOf(NAME);
      return { route, prefix: route.path.slice(0, at), suffix: route.path.slice(at + NAME.length) };
    });
  return {
    match(path) {
      const route = fixed.get(path);
      if (route !== undefined) return { route, param: '' };
      for (const { route, prefix, suffix } of named) {
        if (path.length <= prefix.length + suffix.length || !path.startsWith(prefix) || !path.endsWith(suffix))
          continue;
        const segment = path.slice(prefix.length, path.length - suffix.length);
        if (!segment.includes('/')) return { route, param: safeDecode(segment) };
      }
      return { route: path.startsWith('/v1/') ? UNKNOWN_V1 : UNKNOWN, param: '' };
    },
  };
}

/** The one named segment a route path may hold (`/v1/metrics/:name`, `/v1/hooks/:name/replay`). */
const NAME = ':name';

function serve(
  services: Services,
  routes: RouteTable,
  logRequest: (line: RequestLine) => void,
  req: IncomingMessage,
  res: ServerResponse,
): void {
  const started = performance.now();
  const requestId = randomUUID();
  res.setHeader('x-request-id', requestId);
  res.setHeader('x-content-type-options', 'nosniff');
  if (services.state.stopping) res.setHeader('connection', 'close');
  const url = req.url ?? '/';
  const mark = url.indexOf('?');
  const path = mark < 0 ? url : url.slice(0, mark);
  const query = mark < 0 ? '' : url.slice(mark + 1);
  const { route, param } = routes.match(path);

  // Counted for graceful shutdown. 'close' comes after every response: just after 'finish'
  // when the answer was ended (handed whole to the socket), or when the client left before
  // (then the work done for it is cancelled). Either way the request is logged and counted once, with how it ended. One
  // listener, not one for each event: a 'finish' listener beside the server's own made every
  // response copy its listener list, and the two cost REST about 1% of its throughput.
  const gone = new ClientGone();
  // Public routes are not metered; a keyed route gets its caller's meter in run().
  const call: RouteCall<Services> = { req, res, services, param, query, signal: gone, meter: UNLIMITED_METER };
  let failed = false;
  services.state.inFlight += 1;
  res.on('close', () => {
    services.state.inFlight -= 1;
    let outcome: Outcome | undefined;
    if (!res.writableEnded) {
      gone.abort();
      outcome = failed ? 'failed' : wasGivenUp(res) ? 'given up' : 'aborted';
    }
    // 499, as nginx logs it, when nothing of the answer was sent: no status reached the client.
    const status = res.headersSent ? res.statusCode : 499;
    const ms = Math.round((performance.now() - started) * 1000) / 1000; // to the µs, as logged before
    logRequest({ requestId, method: req.method ?? 'GET', route: route.path, status, outcome, ms });
    services.metrics.observeRequest(route.path, req.method ?? 'GET', status, ms / 1000, outcome);
    if (call.caller !== undefined) services.usage.record(call.caller.id, call.meter.units);
  });

  run(services, route, call).catch((error: unknown) => {
    if (gone.aborted) return; // the client left: its work was cancelled and nobody waits for an answer
    if (res.headersSent) {
      services.logger.error({ requestId, err: error }, 'failed after the response started');
      failed = true;
      res.destroy();
      return;
    }
    const failure =
      error instanceof ApiError ? error : new ApiError('internal', 'an unexpected error occurred', { cause: error });
    if (failure.kind === 'internal')
      services.logger.error({ requestId, err: failure.cause ?? failure }, failure.message);
    // Expected during an outage and answered with a retry hint: worth a warning, not an error.
    if (failure.kind === 'unavailable')
      services.logger.warn({ requestId, err: failure.cause ?? failure }, failure.message);
    route.errors(req, res, failure);
  });
}

async function run(services: Services, route: Route<Services>, call: RouteCall<Services>): Promise<void> {
  const { req, res } = call;
  if (applyCors(services.config.corsOrigins, req, res)) return;
  const access: Access = typeof route.access === 'function' ? route.access(req, call.query) : route.access;
  if (access === 'keyed') {
    // A known key and an unlimited meter come at once; awaiting them anyway cost a few µs of every request.
    const header = route.bearer === true ? presentedKey(req.headers) : req.headers['x-api-key'];
    const known = authenticate(services.keys, header, services.refusedKeys, req.socket, route.bearer);
    const caller = known instanceof Promise ? await known : known;
    call.caller = caller;
    const onHeaders = (headers: Readonly<Record<string, string>>) => {
      for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    };
    const dryRun = route.dryRun === true && dryRunAsked(req.headers, call.query);
    const opened = services.rateLimiter.open(caller, onHeaders, dryRun);
    call.meter = opened instanceof Promise ? await opened : opened;
  }
  if (route.methods !== undefined && !route.methods.includes(req.method ?? '')) {
    const allow = route.methods.join(', ');
    throw new ApiError('method-not-allowed', `${req.method} is not allowed; use ${allow}`, { headers: { allow } });
  }
  await route.handle(call);
}

function notFound(call: RouteCall<unknown>): never {
  const path = (call.req.url ?? '/').split('?')[0]!;
  throw new ApiError('not-found', `nothing is served at ${clipped(path)}`);
}

function safeDecode(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
