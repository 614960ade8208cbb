import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type Tool as ListedTool,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { z } from 'zod';
import { ApiError, paramsError } from '../api/api-error.js';
import type { Tool, ToolContext } from './tool.js';

/** The tools with their JSON Schemas, made once: `tools/list` answers the same list to every request. */
export interface Toolbox {
  listed: readonly ListedTool[];
  byName: ReadonlyMap<string, Tool>;
}

/** A dry run's answer: the call's cost in rate-limit units, as its REST request is priced. */
export const DRY_RUN_SCHEMA = z.object({ cost: z.object({ units: z.int().min(1) }) });

const DRY_RUN_ARGUMENT = z
  .boolean()
  .optional()
  .describe('true: answer only what the call would cost, in rate-limit units, reading no data and charging nothing.');

export function createToolbox(tools: readonly Tool[]): Toolbox {
  return {
    listed: tools.map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: objectSchema(tool.input.extend({ dry_run: DRY_RUN_ARGUMENT })),
      outputSchema: objectSchema(z.union([tool.output, DRY_RUN_SCHEMA])),
      annotations: { readOnlyHint: true, openWorldHint: false },
    })),
    byName: new Map(tools.map((tool) => [tool.name, tool])),
  };
}

/**
 * An MCP server for one request (stateless): `tools/list` and `tools/call`. A refused
 * argument or a refused REST request is a tool error (`isError`) whose text is REST's
 * problem detail; an unexpected failure is logged and masked, never shown.
 */
export function createMcpServer(toolbox: Toolbox, context: ToolContext, logger: Logger): Server {
  const server = new Server(SERVER_INFO, { capabilities: { tools: { listChanged: false } } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...toolbox.listed] }));
  server.setRequestHandler(CallToolRequestSchema, async ({ params }): Promise<CallToolResult> => {
    const tool = toolbox.byName.get(params.name);
    if (tool === undefined) {
      const known = [...toolbox.byName.keys()].join(', ');
      throw new McpError(ErrorCode.InvalidParams, `unknown tool ${JSON.stringify(params.name)}; tools: ${known}`);
    }
    const { dry_run: dryRun, ...args } = params.arguments ?? {};
    try {
      if (dryRun !== undefined && typeof dryRun !== 'boolean')
        throw paramsError([{ param: 'dry_run', message: `expected true or false, got ${JSON.stringify(dryRun)}` }]);
      if (dryRun === true) return answered({ cost: { units: await tool.cost(args, context) } });
      const answer = await tool.run(args, context);
      return answered(answer.structured, answer.text);
    } catch (error) {
      if (error instanceof ApiError && error.kind !== 'internal') return failed(error.message);
      logger.error({ err: error, tool: tool.name }, 'a tool call failed');
      return failed('an unexpected error occurred');
    }
  });
  return server;
}

// Private

/** Who answers `initialize`: the service, its API version. */
const SERVER_INFO = { name: 'metrics-service', title: 'Metrics API', version: '1.0.0' };

function answered(structured: Record<string, unknown>, text = JSON.stringify(structured)): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured };
}

function failed(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}

/** A zod schema as the JSON Schema (draft 7) of an MCP tool, whose top level is an object. */
function objectSchema(schema: z.ZodType): ListedTool['inputSchema'] {
  const json = portable(z.toJSONSchema(schema, { target: 'draft-7', io: 'input' })) as Record<string, unknown>;
  return { ...json, type: 'object' } as ListedTool['inputSchema'];
}

/**
 * The spellings clients that map schemas onto a one-`type` dialect (Gemini's function declarations)
 * read: a nullable `type: [T, "null"]` as `anyOf` branches, and an open object's `additionalProperties: {}`
 * as `true`. The same schema otherwise.
 */
function portable(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(portable);
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    const empty = typeof value === 'object' && value !== null && Object.keys(value).length === 0;
    out[key] = key === 'additionalProperties' && empty ? true : portable(value);
  }
  const { type } = out;
  if (Array.isArray(type) && type.length === 2 && type.includes('null')) {
    delete out.type;
    out.anyOf = [{ type: type.find((t) => t !== 'null') }, { type: 'null' }];
  }
  return out;
}
