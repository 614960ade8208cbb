import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { priceRequest } from '../src/limits/request-cost.js';
import { startTestService, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

type Points = Record<string, { date: string; value: number | null }[]>;

describe('limit_per_project pricing', () => {
  it('prices the newest point of every project by what is read: one unit for every project of a metric', () => {
    const slugs = CATALOG.byName.get('etf-flows-btc')!.projects;
    const options = { interval: 'day', aggregation: 'sum', fill: 'none', transform: null, window: null } as const;
    const today = Date.parse('2026-06-30T00:00:00Z') / 86_400_000;
    const whole = priceRequest({ slugs, from: null, to: null, options }, today, []);
    const latest = priceRequest({ slugs, from: null, to: null, options, limitPerProject: 1 }, today, []);
    expect(whole.cost).toBeGreaterThanOrEqual(slugs.length * 10);
    expect(latest.cost).toBe(1);
    expect(latest.span.buckets).toBe(1);
  });
});

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`latest values (limit_per_project) on ${kind.name}`, () => {
    let svc: TestService;
    beforeAll(async () => {
      svc = await startTestService(kind);
    });
    afterAll(async () => svc?.stop());

    const json = async (path: string) => {
      const res = await svc.get(path);
      expect(res.status, path).toBe(200);
      return (await res.json()) as Points;
    };

    it.each([
      ['', 3],
      ['&interval=month', 2],
      ['&interval=week&fill=zero&transform=moving_average&window=3', 4],
      ['&start_date=2026-01-01&end_date=2026-03-31', 1],
    ])('answers the N newest points of each series, ascending, with %s', async (options, n) => {
      const path = `/v1/metrics/volume-usd?project=binance,coinbase${options}`;
      const whole = await json(path);
      const latest = await json(`${path}&limit_per_project=${n}`);
      expect(Object.keys(latest)).toEqual(Object.keys(whole));
      for (const slug of Object.keys(whole)) expect(latest[slug]).toEqual(whole[slug]!.slice(-n));
    });

    it('keeps the answer without the parameter byte for byte', async () => {
      const a = await (await svc.get('/v1/metrics/price?project=ethereum')).text();
      const b = await (await svc.get('/v1/metrics/price?project=ethereum&limit_per_project=10000')).text();
      expect(b).toBe(a);
    });

    it('limits export rows and GraphQL points the same way', async () => {
      const whole = await json('/v1/metrics/price?project=ethereum,solana');
      const csv = await (await svc.get('/v1/export?metric=price&project=ethereum,solana&limit_per_project=2')).text();
      expect(csv.trim().split('\n').slice(1)).toEqual(
        ['ethereum', 'solana'].flatMap((slug) =>
          whole[slug]!.slice(-2).map((p) => `price,${slug},${p.date},${p.value}`),
        ),
      );
      const res = await svc.graphql(
        '{ metric(name: price, projects: [ethereum], limitPerProject: 1) { series { points { date value } } } }',
      );
      const body = (await res.json()) as { data: { metric: { series: { points: unknown[] }[] } } };
      expect(body.data.metric.series[0]!.points).toEqual(whole.ethereum!.slice(-1));
    });

    it.each(['0', '10001', 'one', '-1'])('refuses limit_per_project=%s naming it', async (value) => {
      const res = await svc.get(`/v1/metrics/price?project=ethereum&limit_per_project=${value}`);
      expect(res.status).toBe(400);
      const body = (await res.json()) as { errors: { param: string; message: string }[] };
      expect(body.errors).toEqual([
        {
          param: 'limit_per_project',
          message: `expected a whole number of points from 1 to 10000, got ${JSON.stringify(value)}`,
        },
      ]);
    });
  });
}
