import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { compileExpression } from '../src/formula/compile-expression.js';
import { parseFormula } from '../src/formula/formula-expression.js';
import { importFile } from '../src/import/import-files.js';
import { priceSeriesRequest } from '../src/limits/formula-cost.js';
import { priceRequest } from '../src/limits/request-cost.js';
import { startTestService, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

type Points = Record<string, { date: string; value: number | null }[]>;

const P = 'priority-fees-usd';
const B = 'transaction-base-fee-total-usd';
const SHARE = `expr=${encodeURIComponent('100 * p / (p + b)')}&input=p:${P}&input=b:${B}`;
const RANGE = 'start_date=2026-06-01&end_date=2026-06-30';

/** 100 p / (p + b) per date both inputs have, null where p + b is zero: computed here, not by the service. */
function share(p: Points[string], b: Points[string]): { date: string; value: number | null }[] {
  const base = new Map(b.map((x) => [x.date, x.value!]));
  return p.flatMap(({ date, value }) => {
    const other = base.get(date);
    if (other === undefined) return [];
    return [{ date, value: value! + other === 0 ? null : (100 * value!) / (value! + other) }];
  });
}

/** Sums each month's days, as `interval=month` with the sum aggregation does. */
function monthlySums(points: Points[string]): Points[string] {
  const months = new Map<string, number>();
  for (const { date, value } of points)
    months.set(`${date.slice(0, 7)}-01`, (months.get(`${date.slice(0, 7)}-01`) ?? 0) + value!);
  return [...months].map(([date, value]) => ({ date, value }));
}

function expectClose(actual: Points[string], expected: Points[string]): void {
  expect(actual.map((x) => x.date)).toEqual(expected.map((x) => x.date));
  actual.forEach((x, i) => {
    const want = expected[i]!.value;
    if (want === null) expect(x.value, x.date).toBeNull();
    else expect(Math.abs(x.value! - want), x.date).toBeLessThan(1e-9 * Math.max(1, Math.abs(want)));
  });
}

describe('formula expressions', () => {
  it('compile to SQL that holds no user text: literals are parameters, names are made columns', () => {
    const { text, literals } = compileExpression(
      parseFormula('12345.678 * revenue_x / (7e3 + cost)', ['revenue_x', 'cost']),
      (name) => (name === 'revenue_x' ? 'i0.value' : 'i1.value'),
    );
    expect(literals).toEqual(['12345.678', '7e3']);
    expect(text).not.toMatch(/12345|7e3|revenue_x|cost/);
    expect(text).toBe('(({{lit0}}::numeric * i0.value) / nullif(({{lit1}}::numeric + i1.value), 0))');
  });

  it('prices a derived metric as the sum of its inputs read over the same projects and range', () => {
    const share = CATALOG.served.get('priority-fee-share-pct')!;
    const options = { interval: 'day', aggregation: 'sum', fill: 'none', transform: null, window: null } as const;
    const request = { metric: share, slugs: ['arbitrum', 'base'], from: '2024-01-01', to: '2025-12-31', options };
    const today = Date.parse('2026-06-30T00:00:00Z') / 86_400_000;
    const input = priceRequest(request, today, []).cost;
    expect(input).toBe(Math.ceil((2 * 731) / 365));
    expect(priceSeriesRequest(request, today, () => undefined).cost).toBe(2 * input);
  });

  it('reads ^ as right-associative and tighter than * , and unary minus tighter still', () => {
    const tree = parseFormula('2 * -p ^ 3 ^ 2', ['p']);
    expect(tree).toEqual({
      kind: 'binary',
      operator: '*',
      left: { kind: 'number', text: '2' },
      right: {
        kind: 'binary',
        operator: '^',
        left: { kind: 'negate', argument: { kind: 'input', name: 'p' } },
        right: {
          kind: 'binary',
          operator: '^',
          left: { kind: 'number', text: '3' },
          right: { kind: 'number', text: '2' },
        },
      },
    });
  });
});

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`formula series on ${kind.name}`, () => {
    let svc: TestService;
    let before: string;
    let dir: string;
    beforeAll(async () => {
      svc = await startTestService(kind);
      dir = await mkdtemp(join(tmpdir(), 'formula-'));
      const [row] = await svc.running.services.store.query<{ now: string }>(
        `select to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as now`,
      );
      before = row!.now;
      // A day where both inputs are zero (division by zero) and a day the base fee lacks (a gap).
      const file = join(dir, 'zeros-and-gaps.csv');
      await writeFile(
        file,
        `metric,project,date,value\n${P},arbitrum,2026-06-10,0\n${B},arbitrum,2026-06-10,0\n` +
          `${B},arbitrum,2026-06-12,\n${P},base,2026-06-20,0\n`,
      );
      await importFile(svc.running.services.store, CATALOG, file);
    });
    afterAll(async () => {
      await svc?.stop();
      if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    });

    const json = async (path: string) => {
      const res = await svc.get(path);
      expect(res.status, `${path}: ${res.status}`).toBe(200);
      return (await res.json()) as Points;
    };
    const problem = async (path: string) => {
      const res = await svc.get(path);
      expect(res.status, path).toBe(400);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      return ((await res.json()) as { errors: { param: string; message: string }[] }).errors;
    };
    const daily = async (query: string) => ({
      p: await json(`/v1/metrics/${P}?project=arbitrum,base&${query}`),
      b: await json(`/v1/metrics/${B}?project=arbitrum,base&${query}`),
    });

    it('computes 100 p / (p + b) per day as the daily REST data gives it, null at 0 / 0, no point at a gap', async () => {
      const { p, b } = await daily(RANGE);
      const answer = await json(`/v1/formula?${SHARE}&project=arbitrum,base&${RANGE}`);
      expect(Object.keys(answer)).toEqual(['arbitrum', 'base']);
      for (const slug of ['arbitrum', 'base']) expectClose(answer[slug]!, share(p[slug]!, b[slug]!));
      expect(answer.arbitrum!.find((x) => x.date === '2026-06-10')?.value).toBeNull();
      expect(answer.arbitrum!.some((x) => x.date === '2026-06-12')).toBe(false);
      expect(answer.base!.find((x) => x.date === '2026-06-20')?.value).toBe(0);
    });

    it('buckets each input with its own aggregation before the expression', async () => {
      const { p, b } = await daily('start_date=2026-01-01&end_date=2026-06-30');
      const answer = await json(
        `/v1/formula?${SHARE}&project=arbitrum&start_date=2026-01-01&end_date=2026-06-30&interval=month`,
      );
      expectClose(answer.arbitrum!, share(monthlySums(p.arbitrum!), monthlySums(b.arbitrum!)));
      // b by its monthly maximum instead of its sum.
      const withMax = await json(
        `/v1/formula?expr=p-b&input=p:${P}&input=b:${B}:max&project=arbitrum&start_date=2026-01-01` +
          '&end_date=2026-06-30&interval=month',
      );
      const maxima = new Map<string, number>();
      for (const { date, value } of b.arbitrum!)
        maxima.set(`${date.slice(0, 7)}-01`, Math.max(maxima.get(`${date.slice(0, 7)}-01`) ?? -Infinity, value!));
      expectClose(
        withMax.arbitrum!,
        monthlySums(p.arbitrum!).map(({ date, value }) => ({ date, value: value! - maxima.get(date)! })),
      );
    });

    it('gives the null point at a gap with fill=null, and a transform over the result', async () => {
      const filled = await json(`/v1/formula?${SHARE}&project=arbitrum&${RANGE}&fill=null`);
      expect(filled.arbitrum!.find((x) => x.date === '2026-06-12')).toEqual({ date: '2026-06-12', value: null });
      // The change of the range's first day is against the day before it, read to warm the transform up.
      const plain = (await json(`/v1/formula?${SHARE}&project=arbitrum&start_date=2026-05-31&end_date=2026-06-30`))
        .arbitrum!;
      const changed = (await json(`/v1/formula?${SHARE}&project=arbitrum&${RANGE}&transform=change`)).arbitrum!;
      const byDate = new Map(plain.map((x) => [x.date, x.value]));
      for (const { date, value } of changed) {
        const previousDay = new Date(Date.parse(`${date}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
        const [now, then] = [byDate.get(date), byDate.get(previousDay)];
        if (now == null || then == null) expect(value, date).toBeNull();
        else expect(Math.abs(value! - (now - then)), date).toBeLessThan(1e-9);
      }
    });

    it('answers as_of with the values served then: before the zeros and the gap', async () => {
      const { p, b } = await daily(`${RANGE}&as_of=${before}`);
      const answer = await json(`/v1/formula?${SHARE}&project=arbitrum&${RANGE}&as_of=${before}`);
      expectClose(answer.arbitrum!, share(p.arbitrum!, b.arbitrum!));
      expect(answer.arbitrum!.find((x) => x.date === '2026-06-10')?.value).not.toBeNull();
    });

    it('keeps ln and sqrt of non-positive numbers, 0 ^ -1 and huge powers null, never an error', async () => {
      const answer = await json(
        `/v1/formula?expr=${encodeURIComponent('ln(p - p) + sqrt(-1 - p) + 0 ^ -1 + exp(p) + p ^ 1000')}` +
          `&input=p:${P}&project=arbitrum&${RANGE}`,
      );
      expect(answer.arbitrum!.length).toBeGreaterThan(0);
      for (const point of answer.arbitrum!) expect(point.value).toBeNull();
      const fine = await json(
        `/v1/formula?expr=${encodeURIComponent('min(p, 2) + max(-p, -3) + abs(-2) + coalesce(p, 1) * 0 + 2 ^ 3 ^ 2')}` +
          `&input=p:${P}&project=arbitrum&${RANGE}`,
      );
      const { p } = await daily(RANGE);
      expect(fine.arbitrum).toEqual(
        p.arbitrum!.map(({ date, value }) => ({ date, value: Math.min(value!, 2) + Math.max(-value!, -3) + 2 + 512 })),
      );
    });

    it('serves the derived metric priority-fee-share-pct like a stored one, in both APIs', async () => {
      const { p, b } = await daily(RANGE);
      const rest = await json(`/v1/metrics/priority-fee-share-pct?project=arbitrum,base&${RANGE}`);
      for (const slug of ['arbitrum', 'base']) expectClose(rest[slug]!, share(p[slug]!, b[slug]!));
      const res = await svc.graphql(
        `{ metric(name: priority_fee_share_pct, projects: [arbitrum], from: "2026-06-01", to: "2026-06-30") {
             name series { slug points { date value } } } }`,
      );
      const body = (await res.json()) as { data: { metric: { series: { points: Points[string] }[] } } };
      expectClose(body.data.metric.series[0]!.points, share(p.arbitrum!, b.arbitrum!));
      const list = (await (await svc.get('/v1/metrics')).json()) as {
        metrics: { name: string; formula?: string | null; inputs?: unknown[] }[];
      };
      const derived = list.metrics.find((m) => m.name === 'priority-fee-share-pct');
      expect(derived?.formula).toBe('100 * p / (p + b)');
      expect(derived?.inputs).toEqual([
        { name: 'p', metric: P, aggregation: null },
        { name: 'b', metric: B, aggregation: null },
      ]);
      expect(list.metrics.filter((m) => m.formula === undefined)).toHaveLength(24);
      const csv = await (
        await svc.get(`/v1/export?metric=priority-fee-share-pct&project=arbitrum&${RANGE}&format=csv`)
      ).text();
      // The same digits as REST's answer, read as text (they carry more than a double holds).
      const restText = await (await svc.get(`/v1/metrics/priority-fee-share-pct?project=arbitrum&${RANGE}`)).text();
      const rows = [...restText.matchAll(/"date":"([^"]+)","value":([^,}]+)/g)].map(
        ([, date, value]) => `priority-fee-share-pct,arbitrum,${date},${value === 'null' ? '' : value}`,
      );
      expect(rows.length).toBeGreaterThan(20);
      expect(csv.trim().split('\n').slice(1)).toEqual(rows);
    });

    it('answers GraphQL formula with the same points as REST', async () => {
      const rest = await json(`/v1/formula?${SHARE}&project=arbitrum&${RANGE}&interval=week`);
      const res = await svc.graphql(
        `{ formula(expr: "100 * p / (p + b)", inputs: [{name: "p", metric: priority_fees_usd},
             {name: "b", metric: transaction_base_fee_total_usd}], projects: [arbitrum],
             from: "2026-06-01", to: "2026-06-30", interval: WEEK) { expr series { slug points { date value } } } }`,
      );
      const body = (await res.json()) as {
        data: { formula: { expr: string; series: { slug: string; points: Points[string] }[] } };
      };
      expect(body.data.formula.expr).toBe('100 * p / (p + b)');
      expectClose(body.data.formula.series[0]!.points, rest.arbitrum!);
    });

    it('computes a group: its projects both inputs allow, in the group order, in both APIs', async () => {
      // The members, worked out here from the catalog: the group's slugs that both input metrics list.
      const group = CATALOG.groups.find((g) => g.name === 'l2-rollups')!;
      const allowed = (slug: string) => [P, B].every((m) => CATALOG.byName.get(m)!.projects.includes(slug));
      const members = group.projects.filter(allowed);
      expect(members.length).toBeGreaterThan(1);
      const byGroup = await json(`/v1/formula?${SHARE}&group=l2-rollups&${RANGE}&interval=week`);
      expect(Object.keys(byGroup)).toEqual(members);
      expect(byGroup).toEqual(await json(`/v1/formula?${SHARE}&project=${members.join(',')}&${RANGE}&interval=week`));
      const res = await svc.graphql(
        `{ formula(expr: "p", inputs: [{name: "p", metric: priority_fees_usd}], group: l2_rollups,
             from: "2026-06-01", to: "2026-06-30") { series { slug } } }`,
      );
      const body = (await res.json()) as { data: { formula: { series: { slug: string }[] } } };
      const pMembers = group.projects.filter((slug) => CATALOG.byName.get(P)!.projects.includes(slug));
      expect(body.data.formula.series.map((x) => x.slug)).toEqual(pMembers);
      expect(await problem(`/v1/formula?${SHARE}&group=l2-rollups&project=arbitrum`)).toEqual([
        { param: 'group', message: 'give a group or projects, not both' },
      ]);
      const unknown = await problem(`/v1/formula?${SHARE}&group=nope`);
      expect(unknown).toEqual([{ param: 'group', message: expect.stringContaining('unknown group "nope"') }]);
    });

    it('answers the newest points of a formula with limit_per_project', async () => {
      const whole = await json(`/v1/formula?${SHARE}&project=arbitrum,base&${RANGE}&interval=week`);
      const latest = await json(
        `/v1/formula?${SHARE}&project=arbitrum,base&${RANGE}&interval=week&limit_per_project=2`,
      );
      for (const slug of ['arbitrum', 'base']) expect(latest[slug]).toEqual(whole[slug]!.slice(-2));
    });

    it('refuses an input the expression does not use, and a stored metric it does not know', async () => {
      expect(await problem(`/v1/formula?expr=p&input=p:${P}&input=b:${B}`)).toEqual([
        { param: 'input', message: 'input b is not used by the expression' },
      ]);
      expect(await problem(`/v1/formula?expr=p&input=p:priority-fee-share-pct`)).toEqual([
        {
          param: 'input',
          message: 'input "p": unknown stored metric "priority-fee-share-pct"; GET /v1/metrics lists them',
        },
      ]);
    });

    it.each([
      ['p +', 'at character 4'],
      ['p); drop table point; --', 'at character 2'],
      ['p || b', 'at character 3'],
      ['q * 2', 'at character 1: unknown input "q"'],
      ['foo(p)', 'unknown function "foo"'],
      ['p.value', 'member access'],
      ['"x"', 'expected a number'],
    ])('refuses the expression %s naming where and what was expected', async (expr, message) => {
      const errors = await problem(`/v1/formula?expr=${encodeURIComponent(expr)}&input=p:${P}&input=b:${B}&${RANGE}`);
      expect(
        errors.some((e) => e.param === 'expr' && e.message.includes(message)),
        JSON.stringify(errors),
      ).toBe(true);
    });

    it('refuses too long, too large and too many-input formulas, and a project an input does not allow', async () => {
      const long = await problem(`/v1/formula?expr=${'p+'.repeat(250)}p&input=p:${P}`);
      expect(long[0]).toMatchObject({ param: 'expr', message: expect.stringContaining('at most 500 characters') });
      const big = await problem(`/v1/formula?expr=${encodeURIComponent('p+'.repeat(40))}p&input=p:${P}`);
      expect(big[0]).toMatchObject({ param: 'expr', message: expect.stringContaining('at most 64 nodes') });
      const nine = Array.from({ length: 9 }, (_, i) => `input=i${i}:${P}`).join('&');
      expect((await problem(`/v1/formula?expr=i0&${nine}`))[0]).toMatchObject({
        param: 'input',
        message: expect.stringContaining('at most 8 inputs'),
      });
      const refused = await problem(`/v1/formula?${SHARE}&project=arbitrum,blackrock`);
      expect(refused).toEqual([
        {
          param: 'project',
          message: expect.stringContaining(`"blackrock" is not a project of ${P} and ${B}`),
        },
      ]);
      const res = await svc.graphql(
        `{ formula(expr: "p / ", inputs: [{name: "p", metric: priority_fees_usd}]) { expr } }`,
      );
      const body = (await res.json()) as { errors: { message: string; extensions: { code: string } }[] };
      expect(body.errors[0]!.extensions.code).toBe('BAD_USER_INPUT');
      expect(body.errors[0]!.message).toContain('at character');
    });
  });
}
