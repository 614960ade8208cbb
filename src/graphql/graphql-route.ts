import type { IncomingMessage } from 'node:http';
import { readyDirectory } from '../api/unavailable.js';
import { readBody, sendFetchResponse, toFetchRequest } from '../http/fetch-bridge.js';
import { renderGraphqlError } from '../http/render-error.js';
import type { Route } from '../http/route.js';
import type { Services } from '../services.js';
import { createGraphqlServer } from './yoga.js';

/**
 * `/graphql`: GraphiQL's page (a GET that asks for HTML and carries no query) is public;
 * every operation needs a key. Failures before Yoga runs (401, 413, 429, 503) are
 * GraphQL responses too, with `extensions.code`.
 */
export function createGraphqlRoute(services: Services): Route {
  const yoga = createGraphqlServer(services);
  return {
    path: '/graphql',
    access: (req, query) => (isGraphiqlPageRequest(req, query) ? 'public' : 'keyed'),
    errors: renderGraphqlError,
    handle: async ({ req, res, query, signal, meter, caller }) => {
      const head = req.method === 'HEAD';
      if (isGraphiqlPageRequest(req, query)) return sendFetchResponse(res, await yoga.fetch(toFetchRequest(req, Buffer.alloc(0))), head);
      const directory = readyDirectory(services.state);
      // Yoga's own Node entry (whatwg-node's light Request, built from the node request's
      // fields) rather than a Fetch API Request of our own: 16% more GraphQL answers per
      // second in the bench. The body is read here first, so the 1 MB limit stays ours.
      const body = req.method === 'GET' || head ? undefined : await readBody(req);
      const request = { method: req.method, url: req.url, headers: req.headers, socket: req.socket, body: body?.length === 0 ? ' ' : body };
      const response = await yoga.handleNodeRequestAndResponse(request, res, { directory, signal, meter, caller: caller?.id ?? 'anonymous' });
      return sendFetchResponse(res, response, head, signal);
    },
  };
}

// Private

function isGraphiqlPageRequest(req: IncomingMessage, query: string): boolean {
  return req.method === 'GET' && (req.headers.accept ?? '').includes('text/html') && !new URLSearchParams(query).has('query');
}
