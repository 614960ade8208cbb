import { createHash } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTERVALS, TRANSFORMS } from '../src/series/series-options.js';
import { startTestService, TEST_KEY, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

interface Point {
  date: string;
  value: number | null;
}

/** A connected SDK client over real HTTP, with the key sent as `headers` say. */
async function connect(svc: TestService, headers: Record<string, string> = { 'x-api-key': TEST_KEY }) {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), { requestInit: { headers } }));
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>) {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

function textOf(result: CallToolResult): string {
  const [first] = result.content;
  if (first?.type !== 'text') throw new Error('expected a text content');
  return first.text;
}

/** The figures of a series' points computed here, from the REST answer, as an agent would. */
function figures(points: readonly Point[]) {
  const values = points.filter((p) => p.value !== null) as { date: string; value: number }[];
  const first = values[0]!.value;
  const last = values.at(-1)!.value;
  return {
    points: points.length,
    from: values[0]!.date,
    to: values.at(-1)!.date,
    first,
    last,
    min: Math.min(...values.map((p) => p.value)),
    max: Math.max(...values.map((p) => p.value)),
    mean: values.reduce((n, p) => n + p.value, 0) / values.length,
    changePercent: ((last - first) / Math.abs(first)) * 100,
  };
}

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`MCP at /mcp on ${kind.name}`, () => {
    let svc: TestService;
    let client: Client;
    beforeAll(async () => {
      svc = await startTestService(kind);
      client = await connect(svc);
    });
    afterAll(async () => {
      await client?.close();
      await svc?.stop();
    });

    it('lists the tools with input and output schemas', async () => {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual([
        'list_metrics',
        'explain_metric',
        'get_series',
        'total',
        'rank',
        'formula',
      ]);
      for (const tool of tools) {
        expect(tool.inputSchema.type).toBe('object');
        expect(tool.inputSchema.properties).toHaveProperty('dry_run');
        expect(tool.outputSchema?.type).toBe('object');
      }
      const series = tools.find((t) => t.name === 'get_series')!.inputSchema.properties as Record<string, unknown>;
      expect(Object.keys(series)).toEqual([
        'metric',
        'project',
        'start_date',
        'end_date',
        'interval',
        'aggregation',
        'fill',
        'transform',
        'window',
        'as_of',
        'vintage',
        'lag_days',
        'limit_per_project',
        'dry_run',
      ]);
      expect(series.interval).toMatchObject({ enum: [...INTERVALS] });
      expect(series.transform).toMatchObject({ enum: [...TRANSFORMS] });
    });

    it('list_metrics answers the REST catalog, each metric with its description, as structured content and text', async () => {
      const result = await call(client, 'list_metrics', {});
      expect(result.isError).toBeFalsy();
      expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
      const rest = (await (await svc.fetch('/v1/metrics')).json()) as { metrics: Record<string, unknown>[] };
      const listed = (result.structuredContent as { metrics: Record<string, unknown>[] }).metrics;
      expect(listed.map(({ description: _d, extraFields: _e, ...entry }) => entry)).toEqual(rest.metrics);
      expect(listed.find((m) => m.name === 'volume-usd')!.description).toMatch(/^Traded volume per day/);
      expect(listed.find((m) => m.name === 'etf-num-products')!.extraFields).toEqual(['spot', 'futures', 'leveraged']);
    });

    it('explain_metric answers one metric, its coverage as REST lists it', async () => {
      const result = await call(client, 'explain_metric', { metric: 'token-price-usd' });
      expect(result.isError).toBeFalsy();
      const rest = (await (await svc.fetch('/v1/metrics')).json()) as { metrics: { name: string }[] };
      const entry = rest.metrics.find((m) => m.name === 'token-price-usd')!;
      expect(result.structuredContent).toMatchObject({
        ...entry,
        graphqlName: 'token_price_usd',
        defaultAggregation: 'avg',
      });
    });

    it('get_series answers the summary, the points REST holds and a citation whose body hash and values check out', async () => {
      const args = {
        metric: 'token-price-usd',
        project: ['ethereum', 'solana'],
        start_date: '2026-01-01',
        end_date: '2026-06-30',
        interval: 'week',
        transform: 'moving_average',
        window: 4,
      };
      const result = await call(client, 'get_series', args);
      expect(result.isError, textOf(result)).toBeFalsy();
      const answer = result.structuredContent as {
        metric: string;
        series: Record<string, unknown>[];
        points: Record<string, Point[]>;
        citation: { asOf: string; rest: string; graphql: string; sha256: string };
      };
      expect(JSON.parse(textOf(result))).toEqual(answer);
      expect(Object.keys(JSON.parse(textOf(result)))).toEqual(['metric', 'series', 'points', 'citation']);

      // The cited REST request, over HTTP, uncompressed: the same bytes, the same numbers.
      const { citation } = answer;
      expect(citation.rest).toBe(
        '/v1/metrics/token-price-usd?project=ethereum,solana&start_date=2026-01-01&end_date=2026-06-30' +
          `&interval=week&transform=moving_average&window=4&as_of=${citation.asOf}`,
      );
      const cited = await svc.fetch(citation.rest, { headers: { 'accept-encoding': 'identity' } });
      expect(cited.status).toBe(200);
      const body = Buffer.from(await cited.arrayBuffer());
      expect(createHash('sha256').update(body).digest('hex')).toBe(citation.sha256);
      expect(JSON.parse(body.toString())).toEqual(answer.points);
      // The text holds the REST body's own bytes: a number a double would change keeps its digits there.
      expect(textOf(result)).toContain(`"points":${body.toString()},"citation":`);
      // Nothing was written since: the request without as_of answers the same.
      const now = await svc.fetch(citation.rest.replace(/&as_of=[^&]+/, ''));
      expect(await now.json()).toEqual(answer.points);

      // asOf is the newest write to the two series, as the REST catalog lists their writes.
      const catalog = (await (await svc.fetch('/v1/metrics')).json()) as {
        metrics: { name: string; projects: { slug: string; updatedAt: string }[] }[];
      };
      const writes = catalog.metrics
        .find((m) => m.name === 'token-price-usd')!
        .projects.filter((p) => p.slug === 'ethereum' || p.slug === 'solana')
        .map((p) => p.updatedAt);
      expect(citation.asOf).toBe(writes.sort().at(-1));
      expect(citation.asOf).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);

      // The summary, computed here from the REST points.
      expect(answer.series.map((s) => s.project)).toEqual(['ethereum', 'solana']);
      for (const s of answer.series) {
        const expected = figures(answer.points[s.project as string]!);
        expect(s.points).toBe(expected.points);
        expect(s).toMatchObject({ from: expected.from, to: expected.to, first: expected.first, last: expected.last });
        expect(s).toMatchObject({ min: expected.min, max: expected.max });
        expect(s.mean).toBeCloseTo(expected.mean, 9);
        expect(s.changePercent).toBeCloseTo(expected.changePercent, 9);
      }

      // The cited GraphQL query answers the same numbers.
      const graphql = await svc.graphql(citation.graphql);
      const data = (await graphql.json()) as { data: { metric: { series: { slug: string; points: Point[] }[] } } };
      for (const series of data.data.metric.series) expect(series.points).toEqual(answer.points[series.slug]);
    });

    it('get_series keeps extra fields, and pins a given as_of to the newest write by then', async () => {
      const instant = new Date().toISOString();
      const args = { metric: 'etf-num-products', project: ['blackrock'], start_date: '2026-06-01', as_of: instant };
      const result = await call(client, 'get_series', args);
      expect(result.isError, textOf(result)).toBeFalsy();
      const { points, citation } = result.structuredContent as {
        points: Record<string, Record<string, unknown>[]>;
        citation: { asOf: string; rest: string };
      };
      expect(Object.keys(points.blackrock![0]!)).toEqual(['date', 'value', 'spot', 'futures', 'leveraged']);
      const catalog = (await (await svc.fetch('/v1/metrics')).json()) as {
        metrics: { name: string; projects: { slug: string; updatedAt: string }[] }[];
      };
      const written = catalog.metrics.find((m) => m.name === 'etf-num-products')!.projects[0]!;
      expect(written.slug).toBe('blackrock');
      expect(citation.asOf).toBe(written.updatedAt);
      expect(await (await svc.fetch(citation.rest)).json()).toEqual(points);

      // Before any write: nothing, cited as of the instant asked for.
      const before = await call(client, 'get_series', { ...args, as_of: '2020-01-01' });
      expect(before.structuredContent).toMatchObject({
        points: { blackrock: [] },
        citation: { asOf: '2020-01-01T23:59:59.999999Z' },
      });
    });

    it('refuses more than 500 points with a tool error asking for a coarser interval, charging nothing', async () => {
      const result = await call(client, 'get_series', {
        metric: 'token-price-usd',
        project: ['ethereum', 'solana'],
        start_date: '2025-07-01',
        end_date: '2026-06-30',
      });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/more than 500 points .*coarser interval/);
    });

    it.each([
      [{ interval: 'hour' }, 'interval=hour'],
      [{ start_date: '2026-02-30' }, 'start_date=2026-02-30'],
      [{ project: ['Ethereum'] }, 'project=Ethereum'],
      [{ transform: 'change', window: 3 }, 'transform=change&window=3'],
    ])('refuses %j with a tool error worded as REST words its 400', async (bad, query) => {
      const result = await call(client, 'get_series', { metric: 'price', project: ['ethereum'], ...bad });
      expect(result.isError).toBe(true);
      const args = query.startsWith('project=') ? query : `project=ethereum&${query}`;
      const rest = await svc.fetch(`/v1/metrics/price?${args}`);
      expect(rest.status).toBe(400);
      expect(textOf(result)).toBe(((await rest.json()) as { detail: string }).detail);
    });

    it('refuses an unknown metric and wrongly typed arguments, naming them', async () => {
      const unknown = await call(client, 'explain_metric', { metric: 'prices' });
      expect(textOf(unknown)).toBe('unknown metric "prices"; GET /v1/metrics lists them');
      const typo = await call(client, 'get_series', {
        metric: 'price',
        project: ['ethereum'],
        startDate: '2026-01-01',
      });
      expect(textOf(typo)).toBe(
        'startDate: unknown parameter "startDate"; expected metric, project, start_date, end_date, interval, ' +
          'aggregation, fill, transform, window, as_of, vintage, lag_days, limit_per_project',
      );
      const typed = await call(client, 'get_series', { metric: 'price', project: ['ethereum'], interval: 7 });
      expect(typed.isError).toBe(true);
      expect(textOf(typed)).toBe('interval: expected a string, got 7');
      const dry = await call(client, 'list_metrics', { dry_run: 'yes' });
      expect(textOf(dry)).toBe('dry_run: expected true or false, got "yes"');
    });

    it('answers dry_run with the cost REST prices the request at, reading nothing', async () => {
      // Three projects, a year of days each: one unit per project-year.
      const year = await call(client, 'get_series', {
        metric: 'token-price-usd',
        project: ['ethereum', 'solana', 'arbitrum'],
        start_date: '2025-07-01',
        end_date: '2026-06-30',
        dry_run: true,
      });
      expect(year.isError, textOf(year)).toBeFalsy();
      expect(year.structuredContent).toEqual({ cost: { units: 3 } });
      // A monthly view of two years: 24 points a project, 730 days read: 730 / 3650 a project.
      const monthly = await call(client, 'get_series', {
        metric: 'token-price-usd',
        project: ['ethereum', 'solana', 'arbitrum'],
        start_date: '2024-07-01',
        end_date: '2026-06-30',
        interval: 'month',
        dry_run: true,
      });
      expect(monthly.structuredContent).toEqual({ cost: { units: 1 } });
      expect((await call(client, 'list_metrics', { dry_run: true })).structuredContent).toEqual({ cost: { units: 1 } });
      const bad = await call(client, 'get_series', { metric: 'price', dry_run: true });
      expect(textOf(bad)).toMatch(/^project: a project is required for price/);
    });

    it('takes the key as Authorization: Bearer', async () => {
      const bearer = await connect(svc, { authorization: `Bearer ${TEST_KEY}` });
      const result = await call(bearer, 'explain_metric', { metric: 'price' });
      expect(result.isError).toBeFalsy();
      await bearer.close();
    });

    it('refuses a wrong key with the 401 problem REST answers, before any MCP message is read', async () => {
      await expect(connect(svc, { 'x-api-key': 'wrong' })).rejects.toThrow(/401/);
      await expect(connect(svc, { authorization: 'Bearer wrong' })).rejects.toThrow(/401/);
      const res = await svc.fetch('/mcp', { key: 'wrong', method: 'POST', body: '{}' });
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(res.headers.get('www-authenticate')).toBe('ApiKey header="x-api-key", Bearer');
      expect(await res.json()).toMatchObject({
        status: 401,
        detail: 'the x-api-key header (or Authorization: Bearer) does not hold a valid key',
      });
    });

    it('answers GET and DELETE with 405, as a stateless server does', async () => {
      for (const method of ['GET', 'DELETE']) {
        const res = await svc.fetch('/mcp', { method });
        expect(res.status, method).toBe(405);
        expect(res.headers.get('allow')).toBe('POST');
      }
    });
  });
}

/** One stateless `tools/call` POST, and the whole units left in the bucket once its own unit was paid. */
async function postTool(svc: TestService, name: string, args: Record<string, unknown>) {
  const res = await svc.fetch('/mcp', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  expect(res.status).toBe(200);
  const left = Number(/;r=(\d+);/.exec(res.headers.get('ratelimit') ?? '')![1]);
  return { left, result: ((await res.json()) as { result: CallToolResult }).result };
}

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`MCP tool calls pay as REST on ${kind.name}`, () => {
    let svc: TestService;
    beforeAll(async () => {
      // A bucket of 20 units that refills a unit a minute: what each request takes shows in `RateLimit`.
      svc = await startTestService(kind, { RATE_LIMIT_PER_MINUTE: '1', RATE_LIMIT_BURST: '20' });
    });
    afterAll(async () => svc?.stop());

    const post = (name: string, args: Record<string, unknown>) => postTool(svc, name, args);

    it('charges a call its REST price plus the unit of its request, a dry run only that unit', async () => {
      const args = { metric: 'token-price-usd', project: ['ethereum', 'solana', 'arbitrum'], interval: 'month' };
      const first = await post('get_series', { ...args, dry_run: true });
      const units = (first.result.structuredContent as { cost: { units: number } }).cost.units;
      // Ten years assumed before today, 3 projects: a unit per project and then some.
      expect(units).toBe(4);
      const second = await post('get_series', { ...args, dry_run: true });
      expect(second.left).toBe(first.left - 1);
      const called = await post('get_series', args);
      expect(called.result.isError, textOf(called.result)).toBeFalsy();
      expect(called.left).toBe(second.left - 1);
      const after = await post('list_metrics', { dry_run: true });
      expect(after.left).toBe(called.left - units - 1);
    });

    it("refuses a call its key cannot pay for with REST's 429 detail", async () => {
      const { result } = await post('get_series', { metric: 'outstanding-mnav', interval: 'year' });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/^this request costs \d+ units and the key has \d+ left .*; retry in \d+ s$/);
    });
  });
}

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`MCP analytics and catalog calls pay as REST on ${kind.name}`, () => {
    let svc: TestService;
    beforeAll(async () => {
      svc = await startTestService(kind, { RATE_LIMIT_PER_MINUTE: '1', RATE_LIMIT_BURST: '100' });
    });
    afterAll(async () => svc?.stop());

    it('charges explain_metric, total and rank what their dry runs answer, plus the unit of their request', async () => {
      const calls: [string, Record<string, unknown>][] = [
        ['explain_metric', { metric: 'token-price-usd' }],
        ['total', { metric: 'volume-usd', group: 'major-cex', interval: 'month' }],
        ['rank', { metric: 'volume-usd', group: 'major-cex', start_date: '2026-01-01', end_date: '2026-03-31' }],
      ];
      for (const [name, args] of calls) {
        const dry = await postTool(svc, name, { ...args, dry_run: true });
        const units = (dry.result.structuredContent as { cost: { units: number } }).cost.units;
        const called = await postTool(svc, name, args);
        expect(called.result.isError, textOf(called.result)).toBeFalsy();
        const after = await postTool(svc, 'list_metrics', { dry_run: true });
        expect(after.left, name).toBe(called.left - units - 1);
      }
    });
  });
}
