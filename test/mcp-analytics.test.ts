import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RANK_BY, RANK_ORDERS } from '../src/analytics/rank-request.js';
import { TOTAL_OPS } from '../src/analytics/total-request.js';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { INTERVALS } from '../src/series/series-options.js';
import { startTestService, TEST_KEY, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

interface Point {
  date: string;
  value: number | null;
}

async function connect(svc: TestService) {
  const client = new Client({ name: 'mcp-analytics-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), {
    requestInit: { headers: { 'x-api-key': TEST_KEY } },
  });
  await client.connect(transport);
  return client;
}

function textOf(result: CallToolResult): string {
  const [first] = result.content;
  if (first?.type !== 'text') throw new Error('expected a text content');
  return first.text;
}

/** Relative closeness, for sums of decimals computed here in another order than PostgreSQL's. */
function near(actual: number | null, expected: number | null): boolean {
  if (actual === null || expected === null) return actual === expected;
  return Math.abs(actual - expected) <= 1e-9 * Math.max(1, Math.abs(expected));
}

const P = 'priority-fees-usd';
const B = 'transaction-base-fee-total-usd';

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`MCP total, rank and formula on ${kind.name}`, () => {
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

    const call = async (name: string, args: Record<string, unknown>) =>
      (await client.callTool({ name, arguments: args })) as CallToolResult;

    /** REST's answer over HTTP, uncompressed: its status and its body's text. */
    const rest = async (path: string) => {
      const res = await svc.fetch(path, { headers: { 'accept-encoding': 'identity' } });
      return { status: res.status, text: await res.text() };
    };

    /** The call's answer is REST's, byte for byte as text and as structured content. */
    const expectRestAnswer = async (result: CallToolResult, path: string) => {
      expect(result.isError, textOf(result)).toBeFalsy();
      const answer = await rest(path);
      expect(answer.status).toBe(200);
      expect(textOf(result)).toBe(answer.text);
      expect(result.structuredContent).toEqual(JSON.parse(answer.text));
    };

    /** A dry run's units are REST's `dry_run=true` answer's. */
    const expectRestCost = async (name: string, args: Record<string, unknown>, path: string) => {
      const dry = await call(name, { ...args, dry_run: true });
      expect(dry.isError, textOf(dry)).toBeFalsy();
      const answer = await rest(`${path}&dry_run=true`);
      expect(answer.status).toBe(200);
      const units = (JSON.parse(answer.text) as { cost: { units: number } }).cost.units;
      expect(dry.structuredContent).toEqual({ cost: { units } });
      return units;
    };

    it('lists total, rank and formula with schemas from the REST option lists', async () => {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual([
        'list_metrics',
        'explain_metric',
        'get_series',
        'total',
        'rank',
        'formula',
      ]);
      const props = (name: string) =>
        tools.find((t) => t.name === name)!.inputSchema.properties as Record<string, Record<string, unknown>>;
      for (const name of ['total', 'rank', 'formula']) {
        const tool = tools.find((t) => t.name === name)!;
        expect(tool.inputSchema.type).toBe('object');
        expect(tool.outputSchema?.type).toBe('object');
        expect(props(name)).toHaveProperty('dry_run');
      }
      expect(Object.keys(props('total'))).toEqual([
        'metric',
        'group',
        'project',
        'start_date',
        'end_date',
        'interval',
        'aggregation',
        'fill',
        'transform',
        'window',
        'as_of',
        'op',
        'require_complete',
        'dry_run',
      ]);
      expect(props('total').op).toMatchObject({ enum: [...TOTAL_OPS] });
      expect(props('total').interval).toMatchObject({ enum: [...INTERVALS] });
      expect(props('total').group).toMatchObject({ enum: CATALOG.groups.map((g) => g.name) });
      expect(props('rank').by).toMatchObject({ enum: [...RANK_BY] });
      expect(props('rank').order).toMatchObject({ enum: [...RANK_ORDERS] });
      expect(tools.find((t) => t.name === 'rank')!.inputSchema.required).toEqual(
        expect.arrayContaining(['metric', 'start_date', 'end_date']),
      );
      expect(Object.keys(props('formula'))).toEqual(expect.arrayContaining(['expr', 'input', 'project']));
    });

    it('total answers REST totals; its sum is the daily values summed here', async () => {
      const args = {
        metric: 'volume-usd',
        project: ['binance', 'okx'],
        start_date: '2026-06-01',
        end_date: '2026-06-30',
        op: 'sum',
      };
      const path = '/v1/totals/volume-usd?project=binance,okx&start_date=2026-06-01&end_date=2026-06-30&op=sum';
      const result = await call('total', args);
      await expectRestAnswer(result, path);
      // Independently: the plain daily series of each project, summed per day in JS.
      const daily = JSON.parse(
        (await rest('/v1/metrics/volume-usd?project=binance,okx&start_date=2026-06-01&end_date=2026-06-30')).text,
      ) as Record<string, Point[]>;
      const sums = new Map<string, number>();
      for (const points of Object.values(daily))
        for (const p of points) if (p.value !== null) sums.set(p.date, (sums.get(p.date) ?? 0) + p.value);
      const points = (result.structuredContent as { points: Point[] }).points;
      expect(points.length).toBe(sums.size);
      expect(points.length).toBeGreaterThan(20);
      for (const p of points) expect(near(p.value, sums.get(p.date)!), p.date).toBe(true);

      const grouped = {
        metric: 'volume-usd',
        group: 'major-cex',
        interval: 'week',
        op: 'median',
        require_complete: true,
      };
      const groupedPath = '/v1/totals/volume-usd?group=major-cex&interval=week&op=median&require_complete=true';
      await expectRestAnswer(await call('total', grouped), groupedPath);
      expect(await expectRestCost('total', grouped, groupedPath)).toBeGreaterThanOrEqual(1);
      await expectRestCost('total', args, path);
    });

    it('rank answers REST rankings, by value and by change', async () => {
      const args = { metric: 'volume-usd', group: 'major-cex', start_date: '2026-06-01', end_date: '2026-06-14' };
      const path = '/v1/rank/volume-usd?start_date=2026-06-01&end_date=2026-06-14&group=major-cex';
      const result = await call('rank', args);
      await expectRestAnswer(result, path);
      const rows = (result.structuredContent as { rows: { rank: number; value: number }[] }).rows;
      expect(rows.length).toBeGreaterThan(1);
      for (let i = 1; i < rows.length; i += 1) expect(rows[i]!.value).toBeLessThanOrEqual(rows[i - 1]!.value);

      const change = { ...args, by: 'percent_change', order: 'asc', top: 3, aggregation: 'avg' };
      const changePath = `${path}&by=percent_change&order=asc&top=3&aggregation=avg`;
      await expectRestAnswer(await call('rank', change), changePath);
      await expectRestCost('rank', args, path);
    });

    it('formula answers REST formulas; the share is computed here from the daily inputs', async () => {
      const args = {
        expr: '100 * p / (p + b)',
        input: [`p:${P}`, `b:${B}`],
        project: ['arbitrum', 'base'],
        start_date: '2026-06-01',
        end_date: '2026-06-30',
      };
      const query = `expr=${encodeURIComponent('100 * p / (p + b)')}&input=p:${P}&input=b:${B}&project=arbitrum,base`;
      const path = `/v1/formula?${query}&start_date=2026-06-01&end_date=2026-06-30`;
      const result = await call('formula', args);
      await expectRestAnswer(result, path);
      const range = 'project=arbitrum&start_date=2026-06-01&end_date=2026-06-30';
      const p = JSON.parse((await rest(`/v1/metrics/${P}?${range}`)).text) as Record<string, Point[]>;
      const b = JSON.parse((await rest(`/v1/metrics/${B}?${range}`)).text) as Record<string, Point[]>;
      const base = new Map(b.arbitrum!.map((x) => [x.date, x.value]));
      const shares = (result.structuredContent as Record<string, Point[]>).arbitrum!;
      expect(shares.length).toBeGreaterThan(20);
      for (const share of shares) {
        const fee = p.arbitrum!.find((x) => x.date === share.date)!.value!;
        const baseFee = base.get(share.date)!;
        expect(near(share.value, (100 * fee) / (fee + baseFee)), share.date).toBe(true);
      }
      const monthly = { ...args, input: [`p:${P}:max`, `b:${B}`], interval: 'month', start_date: '2025-01-01' };
      const monthlyPath =
        `/v1/formula?expr=${encodeURIComponent('100 * p / (p + b)')}&input=p:${P}:max&input=b:${B}` +
        '&project=arbitrum,base&start_date=2025-01-01&end_date=2026-06-30&interval=month';
      await expectRestAnswer(await call('formula', monthly), monthlyPath);
      await expectRestCost('formula', monthly, monthlyPath);
      await expectRestCost('formula', args, path);
    });

    it("refuses bad arguments with REST's problem detail, dry run or not", async () => {
      const cases: [string, Record<string, unknown>, string][] = [
        ['total', { metric: 'volume-usd', op: 'mean' }, '/v1/totals/volume-usd?op=mean'],
        ['total', { metric: 'volume-usd', group: 'nope' }, '/v1/totals/volume-usd?group=nope'],
        ['rank', { metric: 'volume-usd', group: 'major-cex' }, '/v1/rank/volume-usd?group=major-cex'],
        [
          'rank',
          { metric: 'volume-usd', start_date: '2026-06-01', end_date: '2026-06-02', top: 0 },
          '/v1/rank/volume-usd?start_date=2026-06-01&end_date=2026-06-02&top=0',
        ],
        ['formula', { expr: 'p +', input: [`p:${P}`] }, `/v1/formula?expr=${encodeURIComponent('p +')}&input=p:${P}`],
        ['formula', { expr: 'p', input: ['p:nope'] }, '/v1/formula?expr=p&input=p:nope'],
      ];
      for (const [name, args, path] of cases) {
        const answer = await rest(path);
        expect(answer.status, path).toBe(400);
        const { detail } = JSON.parse(answer.text) as { detail: string };
        for (const dryRun of [false, true]) {
          const result = await call(name, dryRun ? { ...args, dry_run: true } : args);
          expect(result.isError, path).toBe(true);
          expect(textOf(result), path).toBe(detail);
        }
      }
      const unknown = await call('total', { metric: 'volume-usd', projects: ['okx'] });
      expect(unknown.isError).toBe(true);
      expect(textOf(unknown)).toMatch(/^projects: unknown parameter "projects"; expected metric, project, group/);
      const typed = await call('rank', { metric: 'volume-usd', project: [1], start_date: '2026-06-01' });
      expect(textOf(typed)).toMatch(/^project: expected a string, number, boolean or array of strings/);
    });

    it('list_metrics lists groups and derived metrics; explain_metric adds the schedule and revision profile', async () => {
      const listed = await call('list_metrics', {});
      expect(listed.isError, textOf(listed)).toBeFalsy();
      const { metrics, groups } = listed.structuredContent as {
        metrics: Record<string, unknown>[];
        groups: unknown[];
      };
      expect(groups).toEqual((JSON.parse((await rest('/v1/groups')).text) as { groups: unknown[] }).groups);
      const derived = metrics.find((m) => m.name === 'priority-fee-share-pct')!;
      expect(derived).toMatchObject({ formula: expect.any(String), unit: expect.any(String) });
      expect(derived.inputs).toEqual(expect.arrayContaining([expect.objectContaining({ metric: P })]));
      expect(typeof derived.description).toBe('string');
      for (const m of metrics) expect(m).toMatchObject({ unit: expect.any(String), methodology: expect.any(String) });

      const explained = await call('explain_metric', { metric: 'token-price-usd' });
      expect(explained.isError, textOf(explained)).toBeFalsy();
      const profile = JSON.parse((await rest('/v1/metrics/token-price-usd/profile')).text) as {
        revisionProfile: unknown;
      };
      const metric = CATALOG.byName.get('token-price-usd')!;
      expect(explained.structuredContent).toMatchObject({
        unit: metric.unit,
        methodology: metric.methodology,
        tags: [...metric.tags],
        expectedBy: metric.expectedBy,
        stabilizationDays: metric.stabilizationDays,
        revisionProfile: profile.revisionProfile,
      });
      // A derived metric has no revision profile on REST: explained without one.
      const share = await call('explain_metric', { metric: 'priority-fee-share-pct' });
      expect(share.isError, textOf(share)).toBeFalsy();
      expect(share.structuredContent).toMatchObject({ name: 'priority-fee-share-pct', formula: derived.formula });
      expect(share.structuredContent).not.toHaveProperty('revisionProfile');
    });

    it('refuses a formula of more than 500 points, asking for a coarser interval', async () => {
      // A year of seeded days for each of two projects: about 730 points.
      const args = { expr: 'p', input: [`p:${P}`], project: ['arbitrum', 'base'] };
      const formula = await call('formula', args);
      expect(formula.isError).toBe(true);
      expect(textOf(formula)).toMatch(/^the answer would hold \d+ points, more than 500; ask for a coarser interval/);
      const monthly = await call('formula', { ...args, interval: 'month' });
      expect(monthly.isError, textOf(monthly)).toBeFalsy();
    });

    it("get_series's dry run is REST's dry_run answer", async () => {
      const args = { metric: 'token-price-usd', project: ['ethereum', 'solana'], interval: 'week' };
      await expectRestCost('get_series', args, '/v1/metrics/token-price-usd?project=ethereum,solana&interval=week');
    });
  });
}
