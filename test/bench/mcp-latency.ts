/**
 * `npx tsx test/bench/mcp-latency.ts <base URL> <key> [calls]`: MCP `get_series` beside the REST
 * request it cites, one after the other, `calls` times each (200 by default) after a warm-up, on a
 * running service; prints p50 and p99 of each. Both go through the response cache when it is on
 * (the tool's REST request is the cited one). The key should have no rate limit (API_KEYS with
 * RATE_LIMIT_PER_MINUTE=0, or a key made with a large one).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

const [base, key, calls = '200'] = process.argv.slice(2);
if (base === undefined || key === undefined) throw new Error('usage: mcp-latency.ts <base URL> <key> [calls]');

/** Requests as an agent asks them: a monthly view, and 90 days. */
const CASES: Record<string, Record<string, unknown>> = {
  'month, 2 projects, 1 year': { metric: 'token-price-usd', project: ['ethereum', 'solana'], interval: 'month' },
  'day, 1 project, 90 days': {
    metric: 'token-price-usd',
    project: ['ethereum'],
    start_date: '2026-01-01',
    end_date: '2026-03-31',
  },
};

const client = new Client({ name: 'mcp-latency', version: '1.0.0' });
await client.connect(
  new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { 'x-api-key': key } } }),
);
const tool = async (args: Record<string, unknown>) => {
  const result = (await client.callTool({ name: 'get_series', arguments: args })) as CallToolResult;
  if (result.isError) throw new Error(JSON.stringify(result.content));
  return result.structuredContent as { citation: { rest: string } };
};
const rest = async (path: string) => {
  const res = await fetch(`${base}${path}`, { headers: { 'x-api-key': key, 'accept-encoding': 'identity' } });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
};
for (const [label, args] of Object.entries(CASES)) {
  const cited = (await tool(args)).citation.rest;
  for (let i = 0; i < 20; i += 1) await Promise.all([tool(args), rest(cited)]);
  const mcp: number[] = [];
  const plain: number[] = [];
  for (let i = 0; i < Number(calls); i += 1) {
    mcp.push(await timed(() => tool(args)));
    plain.push(await timed(() => rest(cited)));
  }
  console.log(`${label}: MCP get_series ${figures(mcp)}; the cited REST request ${figures(plain)}`);
}
await client.close();

async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

function figures(ms: number[]): string {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!.toFixed(2);
  return `p50 ${at(0.5)} ms, p99 ${at(0.99)} ms`;
}
