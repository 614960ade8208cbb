import fc from 'fast-check';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { importFile } from '../src/import/import-files.js';
import { enumName } from './support/graphql-names.js';
import { projectId } from './support/project-id.js';
import {
  referenceSeries,
  type DailyPoint,
  type ReferenceOptions,
  type ReferencePoint,
} from './support/reference-series.js';
import { startTestService, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

/**
 * Series the properties draw from: prices, counts with extra fields, signed percentages, weekly volumes, and a
 * hand-made one with gaps and zeros.
 */
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
      const store = svc.running.services.store;
      const arbitrum = await projectId(store, 'other-fees-usd', 'arbitrum');
      await store.query('delete from point where project_id = $1', [arbitrum]);
      await writeFile(
        join(dir, 'edges.csv'),
        `metric,project,date,value\n` +
          `${EDGE_SERIES.map((p) => `other-fees-usd,arbitrum,${p.date},${p.value}`).join('\n')}` +
          `\n`,
      );
      expect((await importFile(svc.running.services.store, CATALOG, join(dir, 'edges.csv'))).ok).toBe(true);
      for (const { metric, projects } of SUBJECTS) {
        const body = (await (await svc.get(`/v1/metrics/${metric}?project=${projects.join(',')}`)).json()) as Record<
          string,
          DailyPoint[]
        >;
        for (const slug of projects)
          history.set(
            `${metric}/${slug}`,
            body[slug]!.map((p) => ({ date: p.date, value: p.value })),
          );
      }
    });

    afterAll(async () => {
      await svc?.stop();
      await rm(dir, { recursive: true, force: true });
    });

    const request = fc
      .record({
        subject: fc.constantFrom(...SUBJECTS),
        count: fc.integer({ min: 1, max: 3 }),
        from: fc.option(day('2023-06-01', '2026-07-31'), { nil: null }),
        to: fc.option(day('2023-06-01', '2026-07-31'), { nil: null }),
        interval: fc.constantFrom(...INTERVALS),
        aggregation: fc.option(fc.constantFrom(...AGGREGATIONS), { nil: null }),
        fill: fc.constantFrom(...FILLS),
        transform: fc.constantFrom(...TRANSFORMS),
        window: fc.integer({ min: 1, max: 12 }),
      })
      .filter((r) => r.from === null || r.to === null || r.from <= r.to);

    it(
      'answers REST as the reference computes it from the daily points, for ' +
        'random metrics, projects, ranges and options',
      async () => {
        await fc.assert(
          fc.asyncProperty(request, async (r) => {
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
          }),
          { numRuns: 120 },
        );
      },
    );

    it("answers GraphQL as the reference computes it, with each point's count of days", async () => {
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          const projects = r.subject.projects.slice(0, r.count);
          const args = [
            `name: ${enumName(r.subject.metric)}`,
            `projects: [${projects.join(', ')}]`,
            ...(r.from === null ? [] : [`from: "${r.from}"`]),
            ...(r.to === null ? [] : [`to: "${r.to}"`]),
            `interval: ${r.interval.toUpperCase()}`,
            ...(r.aggregation === null ? [] : [`aggregation: ${r.aggregation.toUpperCase()}`]),
            `fill: ${r.fill.toUpperCase()}`,
            ...(r.transform === null ? [] : [`transform: ${r.transform.toUpperCase()}`]),
            ...(r.transform === 'moving_average' ? [`window: ${r.window}`] : []),
          ];
          const selection = 'name series { slug points { date value count } }';
          const res = await svc.graphql(`{ metric(${args.join(', ')}) { ${selection} } }`);
          type Series = { slug: string; points: ReferencePoint[] };
          const body = (await res.json()) as { data: { metric: { name: string; series: Series[] } }; errors?: unknown };
          expect(body.errors).toBeUndefined();
          // Which series came back, so a wrong or missing one cannot pass as an empty loop.
          expect(body.data.metric.name).toBe(r.subject.metric);
          expect(body.data.metric.series.map((series) => series.slug)).toEqual(projects);
          for (const series of body.data.metric.series) {
            const want = expected(r, series.slug);
            expectSeries(series.points, want, r);
            expect(series.points.map((p) => p.count)).toEqual(want.map((p) => p.count));
          }
        }),
        { numRuns: 120 },
      );
    });

    /** The REST answer for the hand-made series (other-fees-usd, arbitrum) with these parameters. */
    const edges = async (query: string) => {
      const res = await svc.get(`/v1/metrics/other-fees-usd?project=arbitrum&${query}`);
      expect(res.status).toBe(200);
      return ((await res.json()) as { arbitrum: { date: string; value: number | null }[] }).arbitrum;
    };
    const counts = async (args: string) => {
      const res = await svc.graphql(
        `{ metric(name: other_fees_usd, projects: [arbitrum], ${args}) { series { points { date value count } } } }`,
      );
      return ((await res.json()) as { data: { metric: { series: { points: ReferencePoint[] }[] } } }).data.metric
        .series[0]!.points;
    };

    describe('edges, worked out by hand', () => {
      it(
        'labels a week by its Monday when the range starts mid-week, and aggregates ' + 'only the days in range',
        async () => {
          expect(await counts('from: "2024-01-03", to: "2024-01-10", interval: WEEK, aggregation: SUM')).toEqual([
            { date: '2024-01-01', value: 130, count: 5 },
            { date: '2024-01-08', value: 90, count: 3 },
          ]);
        },
      );

      it(
        'counts the leap day in February and labels a month by its first day when ' + 'the range starts mid-month',
        async () => {
          for (const [aggregation, value] of [
            ['sum', -13.5],
            ['avg', -3.375],
            ['min', -6.75],
            ['max', 0],
            ['first', 0],
            ['last', -6.75],
          ] as const) {
            expect(
              await edges(`start_date=2024-02-10&end_date=2024-02-29&interval=month&aggregation=${aggregation}`),
            ).toEqual([{ date: '2024-02-01', value }]);
          }
        },
      );

      it('splits a week and a year at the year end by the calendar', async () => {
        expect(await counts('from: "2024-12-28", to: "2025-01-03", interval: WEEK, aggregation: SUM')).toEqual([
          { date: '2024-12-23', value: 199, count: 2 },
          { date: '2024-12-30', value: 480, count: 5 },
        ]);
        expect(await counts('from: "2024-12-28", interval: YEAR, aggregation: SUM')).toEqual([
          { date: '2024-01-01', value: 394, count: 4 },
          { date: '2025-01-01', value: 285, count: 3 },
        ]);
      });

      it('gives no percentage across a gap or from zero, and no change across a gap', async () => {
        expect(await edges('start_date=2024-01-10&end_date=2024-01-23&transform=percent_change')).toEqual([
          { date: '2024-01-10', value: 3.3333333333333335 },
          { date: '2024-01-18', value: null },
          { date: '2024-01-19', value: null },
          { date: '2024-01-20', value: 100 },
          { date: '2024-01-21', value: 50 },
          { date: '2024-01-22', value: -100 },
          { date: '2024-01-23', value: null },
        ]);
        expect((await edges('start_date=2024-01-18&end_date=2024-01-19&transform=change')).map((p) => p.value)).toEqual(
          [null, 1.5],
        );
      });

      it(
        'answers a single stored point as one point at every interval, and a moving ' + 'average of it as itself',
        async () => {
          expect(await edges('start_date=2024-04-01&end_date=2024-04-30')).toEqual([{ date: '2024-04-15', value: 7 }]);
          expect(await counts('from: "2024-04-01", to: "2024-04-30", interval: MONTH')).toEqual([
            { date: '2024-04-01', value: 7, count: 1 },
          ]);
          expect(await edges('start_date=2024-04-10&end_date=2024-04-20&transform=moving_average&window=3')).toEqual([
            { date: '2024-04-15', value: 7 },
          ]);
        },
      );

      it("fills a range without data only between the series' first and last day", async () => {
        expect(await edges('start_date=2024-03-10&end_date=2024-04-10')).toEqual([]);
        const nulls = await edges('start_date=2024-03-10&end_date=2024-04-10&fill=null');
        expect(nulls).toHaveLength(32);
        expect(nulls.every((p) => p.value === null)).toBe(true);
        const carried = await counts('from: "2024-03-10", to: "2024-03-12", fill: PREVIOUS');
        expect(carried).toEqual([
          { date: '2024-03-10', value: -11.25, count: 0 },
          { date: '2024-03-11', value: -11.25, count: 0 },
          { date: '2024-03-12', value: -11.25, count: 0 },
        ]);
        expect(await edges('start_date=2026-01-01&fill=zero')).toEqual([]);
        expect(await edges('end_date=2023-12-01&fill=zero')).toEqual([]);
      });

      it(
        'averages what history has when the window is longer than it, and warms ' + 'up from before the range',
        async () => {
          expect(await edges('end_date=2023-12-23&transform=moving_average&window=3650')).toEqual([
            { date: '2023-12-20', value: 10 },
            { date: '2023-12-21', value: 10.5 },
            { date: '2023-12-22', value: 11 },
            { date: '2023-12-23', value: 11.5 },
          ]);
          expect(await edges('start_date=2023-12-23&end_date=2023-12-23&transform=moving_average&window=2')).toEqual([
            { date: '2023-12-23', value: 12.5 },
          ]);
        },
      );

      it(
        "carries the last value into every bucket of a moving average's window, " + "not only the range's first",
        async () => {
          // 2024-12-26 and -27 carry 7 (2024-04-15) under fill previous: (7 + 7 + 100 + 99 + 98) / 5.
          expect(
            await edges('start_date=2024-12-30&end_date=2024-12-30&fill=previous&transform=moving_average&window=5'),
          ).toEqual([{ date: '2024-12-30', value: 62.2 }]);
          // Weeks of 2024-12-16 (7 carried), 2024-12-23 (100 + 99) and 2024-12-30 (98 + … + 94), summed then averaged.
          expect(
            await counts(
              'from: "2024-12-30", to: "2025-01-03", interval: WEEK, aggregation: SUM, ' +
                'fill: PREVIOUS, transform: MOVING_AVERAGE, window: 3',
            ),
          ).toEqual([{ date: '2024-12-30', value: 686 / 3, count: 5 }]);
        },
      );

      it("starts a cumulative sum at the range's first bucket", async () => {
        expect(await edges('start_date=2023-12-30&end_date=2024-01-01&transform=cumulative_sum')).toEqual([
          { date: '2023-12-30', value: 20 },
          { date: '2023-12-31', value: 41 },
          { date: '2024-01-01', value: 63 },
        ]);
      });
    });

    function expected(
      r: {
        subject: (typeof SUBJECTS)[number];
        from: string | null;
        to: string | null;
        interval: ReferenceOptions['interval'];
        aggregation: ReferenceOptions['aggregation'] | null;
        fill: ReferenceOptions['fill'];
        transform: ReferenceOptions['transform'];
        window: number;
      },
      slug: string,
    ): ReferencePoint[] {
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

/**
 * The same dates, and values equal up to float rounding (the service computes with exact decimals); integers
 * exactly.
 */
function expectSeries(
  actual: readonly { date: string; value: number | null }[],
  want: readonly ReferencePoint[],
  context: unknown,
): void {
  expect(
    actual.map((p) => p.date),
    JSON.stringify(context),
  ).toEqual(want.map((p) => p.date));
  actual.forEach((p, i) => {
    const w = want[i]!.value;
    if (w === null || p.value === null) {
      expect(p.value, `${p.date} ${JSON.stringify(context)}`).toBe(w);
    } else {
      expect(Math.abs(p.value - w), `${p.date}: ${p.value} vs ${w} ${JSON.stringify(context)}`).toBeLessThanOrEqual(
        1e-9 * Math.max(1, Math.abs(w)),
      );
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
