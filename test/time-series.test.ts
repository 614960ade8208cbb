import fc from 'fast-check';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { importFile } from '../src/import/import-files.js';
import { referenceSeries, type DailyPoint, type ReferenceOptions, type ReferencePoint } from './support/reference-series.js';
import { startTestService, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

/** Series the properties draw from: prices, counts with extra fields, signed percentages, weekly volumes, and a hand-made one with gaps and zeros. */
const SUBJECTS = [
  { metric: 'token-price-usd', projects: ['ethereum', 'solana', 'arbitrum'] },
  { metric: 'transaction-fail-total', projects: ['ethereum', 'base'] },
  { metric: 'etf-num-products', projects: ['blackrock', 'fidelity'] },
  { metric: 'etf-aum-change-pct', projects: ['blackrock', 'vaneck'] },
  { metric: 'volume-usd', projects: ['binance'] },
  { metric: 'other-fees-usd', projects: ['arbitrum'] },
] as const;

const INTERVALS = ['day', 'week', 'month', 'quarter', 'year'] as const;
const AGGREGATIONS = ['sum', 'avg', 'min', 'max', 'first', 'last'] as const;
const FILLS = ['none', 'null', 'zero', 'previous'] as const;
const TRANSFORMS = [null, 'moving_average', 'change', 'percent_change', 'cumulative_sum'] as const;

/**
 * other-fees-usd/arbitrum is replaced by a series made for the edges: a gap of a week, a
 * month without data, zeros (for percentages), negative values, a leap day, a year end.
 */
const EDGE_SERIES: DailyPoint[] = [
  ...days('2023-12-20', '2024-01-10', (i) => 10 + i),
  ...days('2024-01-18', '2024-02-05', (i) => (i % 4 === 0 ? 0 : i * 1.5)),
  ...days('2024-02-26', '2024-03-02', (i) => -2.25 * i),
  ...days('2024-04-15', '2024-04-15', () => 7),
  ...days('2024-12-28', '2025-01-03', (i) => 100 - i),
];

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`time-series options on ${kind.name}`, () => {
    let svc: TestService;
    let dir: string;
    /** Each subject series' whole stored history, read as the contract's plain REST answer. */
    const history = new Map<string, DailyPoint[]>();

    beforeAll(async () => {
      svc = await startTestService(kind);
      dir = await mkdtemp(join(tmpdir(), 'metrics-ts-'));
      await svc.running.services.store.query(`delete from point where project_id = (select p.id from project p join metric m on m.id = p.metric_id where m.name = 'other-fees-usd' and p.slug = 'arbitrum')`);
      await writeFile(join(dir, 'edges.csv'), `metric,project,date,value\n${EDGE_SERIES.map((p) => `other-fees-usd,arbitrum,${p.date},${p.value}`).join('\n')}\n`);
      expect((await importFile(svc.running.services.store, CATALOG, join(dir, 'edges.csv'))).ok).toBe(true);
      for (const { metric, projects } of SUBJECTS) {
        const body = (await (await svc.get(`/v1/metrics/${metric}?project=${projects.join(',')}`)).json()) as Record<string, DailyPoint[]>;
        for (const slug of projects) history.set(`${metric}/${slug}`, body[slug]!.map((p) => ({ date: p.date, value: p.value })));
      }
    });

    afterAll(async () => {
      await svc?.stop();
      await rm(dir, { recursive: true, force: true });
    });

    const request = fc.record({
      subject: fc.constantFrom(...SUBJECTS),
      count: fc.integer({ min: 1, max: 3 }),
      from: fc.option(day('2023-06-01', '2026-07-31'), { nil: null }),
      to: fc.option(day('2023-06-01', '2026-07-31'), { nil: null }),
      interval: fc.constantFrom(...INTERVALS),
      aggregation: fc.option(fc.constantFrom(...AGGREGATIONS), { nil: null }),
      fill: fc.constantFrom(...FILLS),
      transform: fc.constantFrom(...TRANSFORMS),
      window: fc.integer({ min: 1, max: 12 }),
    }).filter((r) => r.from === null || r.to === null || r.from <= r.to);

    it('answers REST as the reference computes it from the daily points, for random metrics, projects, ranges and options', async () => {
      await fc.assert(fc.asyncProperty(request, async (r) => {
        const projects = r.subject.projects.slice(0, r.count);
        const params = new URLSearchParams({ project: projects.join(','), interval: r.interval, fill: r.fill });
        if (r.from !== null) params.set('start_date', r.from);
        if (r.to !== null) params.set('end_date', r.to);
        if (r.aggregation !== null) params.set('aggregation', r.aggregation);
        if (r.transform !== null) params.set('transform', r.transform);
        if (r.transform === 'moving_average') params.set('window', String(r.window));
        const res = await svc.get(`/v1/metrics/${r.subject.metric}?${params}`);
        expect(res.status).toBe(200);
        const body = (await res.json()) as Record<string, { date: string; value: number | null }[]>;
        expect(Object.keys(body)).toEqual(projects);
        for (const slug of projects) {
          expectSeries(body[slug]!, expected(r, slug), r);
        }
      }), { numRuns: 120 });
    });

    it('answers GraphQL as the reference computes it, with each point\'s count of days', async () => {
      await fc.assert(fc.asyncProperty(request, async (r) => {
        const projects = r.subject.projects.slice(0, r.count);
        const args = [
          `name: ${r.subject.metric.replaceAll('-', '_')}`,
          `projects: [${projects.join(', ')}]`,
          ...(r.from === null ? [] : [`from: "${r.from}"`]),
          ...(r.to === null ? [] : [`to: "${r.to}"`]),
          `interval: ${r.interval.toUpperCase()}`,
          ...(r.aggregation === null ? [] : [`aggregation: ${r.aggregation.toUpperCase()}`]),
          `fill: ${r.fill.toUpperCase()}`,
          ...(r.transform === null ? [] : [`transform: ${r.transform.toUpperCase()}`]),
          ...(r.transform === 'moving_average' ? [`window: ${r.window}`] : []),
        ];
        const res = await svc.graphql(`{ metric(${args.join(', ')}) { series { slug points { date value count } } } }`);
        const body = (await res.json()) as { data: { metric: { series: { slug: string; points: ReferencePoint[] }[] } }; errors?: unknown };
        expect(body.errors).toBeUndefined();
        for (const series of body.data.metric.series) {
          const want = expected(r, series.slug);
          expectSeries(series.points, want, r);
          expect(series.points.map((p) => p.count)).toEqual(want.map((p) => p.count));
        }
      }), { numRuns: 120 });
    });

    function expected(r: { subject: (typeof SUBJECTS)[number]; from: string | null; to: string | null; interval: ReferenceOptions['interval']; aggregation: ReferenceOptions['aggregation'] | null; fill: ReferenceOptions['fill']; transform: ReferenceOptions['transform']; window: number }, slug: string): ReferencePoint[] {
      const metric = CATALOG.byName.get(r.subject.metric)!;
      return referenceSeries(history.get(`${r.subject.metric}/${slug}`)!, r.from, r.to, {
        interval: r.interval,
        aggregation: r.aggregation ?? metric.defaultAggregation,
        fill: r.fill,
        transform: r.transform,
        window: r.window,
      });
    }
  });
}

// Private

/** The same dates, and values equal up to float rounding (the service computes with exact decimals); integers exactly. */
function expectSeries(actual: readonly { date: string; value: number | null }[], want: readonly ReferencePoint[], context: unknown): void {
  expect(actual.map((p) => p.date), JSON.stringify(context)).toEqual(want.map((p) => p.date));
  actual.forEach((p, i) => {
    const w = want[i]!.value;
    if (w === null || p.value === null) {
      expect(p.value, `${p.date} ${JSON.stringify(context)}`).toBe(w);
    } else {
      expect(Math.abs(p.value - w), `${p.date}: ${p.value} vs ${w} ${JSON.stringify(context)}`).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(w)));
    }
  });
}

function day(from: string, to: string): fc.Arbitrary<string> {
  const a = Date.parse(`${from}T00:00:00Z`) / 86_400_000;
  const b = Date.parse(`${to}T00:00:00Z`) / 86_400_000;
  return fc.integer({ min: a, max: b }).map((d) => new Date(d * 86_400_000).toISOString().slice(0, 10));
}

function days(from: string, to: string, value: (i: number) => number): DailyPoint[] {
  const out: DailyPoint[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`), i = 0; t <= Date.parse(`${to}T00:00:00Z`); t += 86_400_000, i += 1) {
    out.push({ date: new Date(t).toISOString().slice(0, 10), value: value(i) });
  }
  return out;
}
