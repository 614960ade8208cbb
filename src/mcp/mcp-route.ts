import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { presentedKey } from '../auth/authenticate.js';
import { readBody, toFetchRequest } from '../http/fetch-bridge.js';
import { renderProblem } from '../http/render-error.js';
import type { Route } from '../http/route.js';
import { sendWhole } from '../http/send-json.js';
import type { McpServices, RunRest } from './mcp-services.js';
import { createMcpServer, createToolbox } from './mcp-server.js';
import { createTools } from './tool-registry.js';

/**
 * `POST /mcp`: the Model Context Protocol over Streamable HTTP, stateless (a server and a
 * transport per request, JSON answers, no session). Keyed like `/v1`, with the key in
 * `x-api-key` or as `Authorization: Bearer <key>`; a tool call runs its REST request
 * in-process with that key, so it is priced, cached and refused as REST. GET and DELETE
 * (a server-sent stream, ending a session) get 405, as a stateless server answers them.
 */
export function createMcpRoute(services: McpServices, runRest: RunRest) {
  const toolbox = createToolbox(createTools(services.catalog));
  return {
    path: '/mcp',
    access: 'keyed',
    bearer: true,
    methods: ['POST'],
    errors: renderProblem,
    handle: async ({ req, res }) => {
      const body = await readBody(req);
      const key = String(presentedKey(req.headers));
      const context = { services, rest: (path: string) => runRest(path, key, req.socket.remoteAddress) };
      const server = createMcpServer(toolbox, context, services.logger);
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      await server.connect(transport);
      try {
        const response = await transport.handleRequest(toFetchRequest(req, body));
        await sendWhole(req, res, {
          status: response.status,
          headers: [...response.headers.entries()],
          body: Buffer.from(await response.arrayBuffer()),
          compress: true,
        });
      } finally {
        await server.close();
      }
    },
  } satisfies Route<McpServices>;
}
