import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../api/api-error.js';
import { createGraphqlServer, GRAPHQL_PATH } from '../graphql/yoga.js';
import { handleCatalog } from '../rest/catalog-route.js';
import { handleDocsPage, handleOpenApi } from '../rest/openapi-route.js';
import { handleMetric } from '../rest/metric-route.js';
import type { Services } from '../services.js';
import { readyDirectory } from '../api/unavailable.js';
import { admitRequest } from './auth-check.js';
import { applyCors } from './cors.js';
import { readBody, sendFetchResponse, toFetchRequest } from './fetch-bridge.js';
import { handleHealth, handleReady } from './health-routes.js';
import { sendGraphqlError, sendProblem } from './problem.js';

const METRIC_PATH = /^\/v1\/metrics\/([^/]+)$/;
const READ_METHODS = 'GET, HEAD';

/**
 * The service's only request listener. Each request takes one path: health checks and
 * the GraphiQL page need no key; every `/v1` and `/graphql` operation is authenticated
 * and charged a unit of its key's rate limit first, then routed to the REST adapter or to Yoga.
 */
export function createRequestListener(services: Services): (req: IncomingMessage, res: ServerResponse) => void {
  const yoga = createGraphqlServer(services);

  async function route(req: IncomingMessage, res: ServerResponse, path: string, query: string, signal: AbortSignal): Promise<void> {
    if (path === '/healthz') return handleHealth(res);
    if (path === '/readyz') return handleReady(services, res);
    if (path === '/docs') return handleDocsPage(services, res);
    if (applyCors(services.config.corsOrigins, req, res)) return;

    if (path === GRAPHQL_PATH) {
      const head = req.method === 'HEAD';
      if (isGraphiqlPageRequest(req, query)) return sendFetchResponse(res, await yoga.fetch(toFetchRequest(req, Buffer.alloc(0))), head);
      const meter = await admitRequest(services, req, res);
      const directory = readyDirectory(services.state);
      const body = await readBody(req);
      return sendFetchResponse(res, await yoga.fetch(toFetchRequest(req, body), { directory, signal, meter }), head);
    }
    if (!path.startsWith('/v1/')) throw new ApiError('not-found', `nothing is served at ${truncate(path)}`);

    const meter = await admitRequest(services, req, res);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      throw new ApiError('method-not-allowed', `${req.method} is not allowed; use GET or HEAD`, { headers: { allow: READ_METHODS } });
    }
    if (path === '/v1/openapi.json') return handleOpenApi(services, req, res);
    if (path === '/v1/metrics') return handleCatalog(services, readyDirectory(services.state), req, res, signal);
    const metric = METRIC_PATH.exec(path)?.[1];
    if (metric !== undefined) return handleMetric(services, readyDirectory(services.state), req, res, { name: safeDecode(metric), rawQuery: query, signal, meter });
    throw new ApiError('not-found', `nothing is served at ${truncate(path)}`);
  }

  return (req, res) => {
    const started = process.hrtime.bigint();
    const requestId = randomUUID();
    res.setHeader('x-request-id', requestId);
    res.setHeader('x-content-type-options', 'nosniff');
    const [path = '/', query = ''] = (req.url ?? '/').split(/\?(.*)/s, 2);
    if (services.state.stopping) res.setHeader('connection', 'close');
    // Counted for graceful shutdown; a client that leaves before its answer is complete
    // cancels the query working for it.
    const gone = new AbortController();
    services.state.inFlight += 1;
    res.once('close', () => {
      services.state.inFlight -= 1;
      if (!res.writableFinished) gone.abort();
    });
    res.on('finish', () => {
      services.logger.info({
        requestId,
        method: req.method,
        route: routeLabel(path),
        status: res.statusCode,
        ms: Number(process.hrtime.bigint() - started) / 1e6,
      }, 'request');
    });
    route(req, res, path, query, gone.signal).catch((error: unknown) => {
      if (gone.signal.aborted) return; // the client left; its query was cancelled and nobody waits for an answer
      if (res.headersSent) {
        services.logger.error({ requestId, err: error }, 'failed after the response started');
        res.destroy();
        return;
      }
      const problem = error instanceof ApiError ? error : new ApiError('internal', 'an unexpected error occurred', { cause: error });
      if (problem.kind === 'internal') services.logger.error({ requestId, err: problem.cause ?? problem }, problem.message);
      // Expected during an outage and answered with a retry hint: worth a warning, not an error.
      if (problem.kind === 'unavailable') services.logger.warn({ requestId, err: problem.cause ?? problem }, problem.message);
      if (path === GRAPHQL_PATH && problem.kind === 'rate-limited') return sendGraphqlError(req, res, problem);
      sendProblem(res, problem, req.method === 'HEAD');
    });
  };
}

// Private

/** GraphiQL's own page (GET, asks for HTML, no query) loads without a key. */
function isGraphiqlPageRequest(req: IncomingMessage, query: string): boolean {
  return req.method === 'GET' && (req.headers.accept ?? '').includes('text/html') && !new URLSearchParams(query).has('query');
}

/** A low-cardinality name for logs: never the raw path of an unknown URL. */
function routeLabel(path: string): string {
  if (METRIC_PATH.test(path)) return '/v1/metrics/:name';
  return ['/healthz', '/readyz', '/docs', GRAPHQL_PATH, '/v1/metrics', '/v1/openapi.json'].includes(path) ? path : 'unmatched';
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function truncate(text: string): string {
  return text.length > 64 ? `${text.slice(0, 64)}…` : text;
}
