import type { z } from 'zod';
import type { McpServices, RestAnswer } from './mcp-services.js';

/**
 * One MCP tool: its schemas as JSON Schema for `tools/list` (made from zod), and what it
 * does. The registry (tool-registry.ts) lists the tools; a new one is a module and a line there.
 */
export interface Tool {
  name: string;
  title: string;
  description: string;
  /** The arguments as advertised (every tool also takes `dry_run`, added by the registry). */
  input: z.ZodObject;
  /** The `structuredContent` of a successful call (a dry run's answer is added by the registry). */
  output: z.ZodObject | z.ZodRecord;
  /**
   * What the call costs in rate-limit units, as REST prices its request, without reading data.
   * Throws the 400 ApiError of a bad argument.
   */
  cost(args: ToolArguments, context: ToolContext): Promise<number> | number;
  /** The call's answer; throws an ApiError (its detail becomes the tool error). */
  run(args: ToolArguments, context: ToolContext): Promise<ToolAnswer>;
}

/** A call's arguments, `dry_run` taken out; checked by each tool (argument-checks.ts). */
export type ToolArguments = Readonly<Record<string, unknown>>;

/** What a tool has for one call. */
export interface ToolContext {
  services: McpServices;
  /** `GET` of a REST path in-process, with the caller's key. */
  rest(pathAndQuery: string): Promise<RestAnswer>;
}

/**
 * A tool's answer: `structured` is the `structuredContent`; `text`, when given, is its JSON
 * text with numbers exactly as REST wrote them (else `structured` is stringified).
 */
export interface ToolAnswer {
  structured: Record<string, unknown>;
  text?: string;
}
