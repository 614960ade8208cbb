import { createHash } from 'node:crypto';
import { z } from 'zod';
import { guardUnavailable, readyDirectory } from '../api/unavailable.js';
import { toGraphqlName } from '../catalog/load-catalog.js';
import { canonicalInstant } from '../dates.js';
import { readCoverage } from '../db/read-coverage.js';
import type { SeriesRequest } from '../series/series-request.js';
import type { McpServices } from './mcp-services.js';
import type { ToolArguments } from './tool.js';

/** Where an answer's numbers can be fetched again and checked, pinned to the newest write they reflect. */
export const CITATION_SCHEMA = z.object({
  asOf: z.string().describe('The newest write the answer reflects (UTC, microseconds); both requests pin it.'),
  rest: z.string().describe('The REST path and query that answers the same numbers (GET with the x-api-key header).'),
  graphql: z.string().describe('The GraphQL query that answers the same numbers (POST /graphql).'),
  sha256: z.string().describe("Lowercase hex SHA-256 of the REST answer's body (uncompressed)."),
});

export type Citation = z.infer<typeof CITATION_SCHEMA>;

/**
 * The instant of the newest write to a request's series, as of its `as_of` when it has one
 * (microseconds, as PostgreSQL keeps write times): an answer read as of it holds exactly the
 * values served now, and will hold them later. No write at all: the request's own `as_of`,
 * else now.
 */
export async function newestWrite(services: McpServices, request: SeriesRequest): Promise<string> {
  const directory = readyDirectory(services.state);
  const ids = request.slugs.map((slug) => directory.idOf(request.metric.name, slug) ?? -1);
  const records = await guardUnavailable(() => readCoverage(services.reads, ids, undefined, request.asOf));
  let newest: string | null = null;
  for (const { updatedAt } of records)
    if (updatedAt !== null && (newest === null || updatedAt > newest)) newest = updatedAt;
  return newest ?? request.asOf ?? canonicalInstant(services.clock().toISOString())!;
}

/** The citation of a REST answer read as of `asOf`. */
export function citationOf(
  request: SeriesRequest,
  args: ToolArguments,
  asOf: string,
  rest: string,
  body: Buffer,
): Citation {
  return {
    asOf,
    rest,
    graphql: graphqlQueryOf(request, args, asOf),
    sha256: createHash('sha256').update(body).digest('hex'),
  };
}

// Private

/** The `metric` query with the arguments the call gave (validated), `asOf` pinned, and the points' fields. */
function graphqlQueryOf(request: SeriesRequest, args: ToolArguments, asOf: string): string {
  const { metric, options } = request;
  const given = (name: string) => args[name] !== undefined && args[name] !== null;
  const parts = [`name: ${toGraphqlName(metric.name)}`];
  if (given('project')) parts.push(`projects: [${request.slugs.map(toGraphqlName).join(', ')}]`);
  if (request.from !== null) parts.push(`from: "${request.from}"`);
  if (request.to !== null) parts.push(`to: "${request.to}"`);
  if (given('interval')) parts.push(`interval: ${options.interval.toUpperCase()}`);
  if (given('aggregation')) parts.push(`aggregation: ${options.aggregation.toUpperCase()}`);
  if (given('fill')) parts.push(`fill: ${options.fill.toUpperCase()}`);
  if (options.transform !== null) parts.push(`transform: ${options.transform.toUpperCase()}`);
  if (given('window') && options.window !== null) parts.push(`window: ${options.window}`);
  if (request.vintage !== 'latest') parts.push(`vintage: ${request.vintage.toUpperCase()}`);
  if (request.lagDays !== null) parts.push(`lagDays: ${request.lagDays}`);
  parts.push(`asOf: "${asOf}"`);
  const fields = metric.extraFields.length > 0 ? 'date value extra' : 'date value';
  return `{ metric(${parts.join(', ')}) { series { slug points { ${fields} } } } }`;
}
