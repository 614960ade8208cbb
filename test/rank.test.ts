import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enumName } from './support/graphql-names.js';
import { near, startAnalyticsFixture, VENUES, type AnalyticsFixture } from './support/analytics-fixture.js';
import { referenceRanking, type RankOptions, type ReferenceRankRow } from './support/reference-analytics.js';
import { STORE_KINDS } from './support/stores.js';

interface RankBody {
  metric: string;
  start_date: string;
  end_date: string;
  previous_start_date: string;
  previous_end_date: string;
  rows: Record<string, unknown>[];
  unranked: string[];
}

const DEFAULTS: RankOptions = { aggregation: 'sum', by: 'value', order: 'desc', top: 10 };

/** Windows and options compared with the reference; 1–25 June holds a tie (coinbase = kraken). */
const CASES: { from: string; to: string; options: Partial<RankOptions> }[] = [
  { from: '2026-06-01', to: '2026-06-25', options: {} },
  { from: '2026-06-01', to: '2026-06-25', options: { order: 'asc', top: 4 } },
  { from: '2026-06-01', to: '2026-06-30', options: { by: 'change' } },
  { from: '2026-06-01', to: '2026-06-30', options: { by: 'percent_change', order: 'asc' } },
  { from: '2026-06-11', to: '2026-06-11', options: { aggregation: 'last' } },
  { from: '2026-05-01', to: '2026-06-30', options: { aggregation: 'avg', by: 'change' } },
  { from: '2026-06-26', to: '2026-06-30', options: { aggregation: 'max', top: 2 } },
  { from: '2026-06-01', to: '2026-06-05', options: { by: 'percent_change' } },
];

function rankQuery(from: string, to: string, o: Partial<RankOptions>, extra: Record<string, string>): string {
  const q = new URLSearchParams({ ...extra, start_date: from, end_date: to });
  for (const name of ['aggregation', 'by', 'order'] as const) if (o[name] !== undefined) q.set(name, o[name]);
  if (o.top !== undefined) q.set('top', String(o.top));
  return q.toString();
}

/** A REST row in the reference's words. */
function fromRest(r: Record<string, unknown>): ReferenceRankRow {
  expect(r.project).toBe(r.slug);
  return {
    rank: r.rank as number,
    slug: r.slug as string,
    value: r.value as number,
    previousValue: r.previous_value as number | null,
    previousRank: r.previous_rank as number | null,
    change: r.change as number | null,
    changePercent: r.change_percent as number | null,
    shareOfTotal: r.share_of_total as number | null,
  };
}

function expectRows(actual: ReferenceRankRow[], expected: ReferenceRankRow[], label: string) {
  expect(
    actual.map((r) => [r.rank, r.slug, r.previousRank]),
    label,
  ).toEqual(expected.map((r) => [r.rank, r.slug, r.previousRank]));
  actual.forEach((r, i) => {
    const e = expected[i]!;
    for (const field of ['value', 'previousValue', 'change', 'changePercent', 'shareOfTotal'] as const)
      expect(near(r[field], e[field]), `${label} ${r.slug} ${field}: ${r[field]} vs ${e[field]}`).toBe(true);
  });
}

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`rankings on ${kind.name}`, () => {
    let fx: AnalyticsFixture;

    beforeAll(async () => {
      fx = await startAnalyticsFixture(kind);
    }, 120_000);
    afterAll(async () => fx?.stop());

    it('ranks a group as the reference computes it from the daily REST data, ties broken by slug', async () => {
      const daily = await fx.daily('volume-usd', VENUES);
      for (const c of CASES) {
        const o = { ...DEFAULTS, ...c.options };
        const res = await fx.svc.get(
          `/v1/rank/volume-usd?${rankQuery(c.from, c.to, c.options, { group: 'major-cex' })}`,
        );
        expect(res.status).toBe(200);
        const body = (await res.json()) as RankBody;
        const expected = referenceRanking(daily, VENUES, c.from, c.to, o);
        expect([body.metric, body.start_date, body.end_date]).toEqual(['volume-usd', c.from, c.to]);
        expect([body.previous_start_date, body.previous_end_date]).toEqual([
          expected.previousFrom,
          expected.previousTo,
        ]);
        expectRows(body.rows.map(fromRest), expected.rows, JSON.stringify(c));
        expect(body.unranked).toEqual(expected.unranked);
      }
      const tie = (await (
        await fx.svc.get('/v1/rank/volume-usd?group=major-cex&start_date=2026-06-01&end_date=2026-06-25')
      ).json()) as RankBody;
      const coinbase = tie.rows.find((r) => r.slug === 'coinbase')!;
      const kraken = tie.rows.find((r) => r.slug === 'kraken')!;
      expect(coinbase.value).toBe(kraken.value);
      expect(kraken.rank).toBe((coinbase.rank as number) + 1);
    });

    it('leaves members without data in the window unranked and shares only sums and last values', async () => {
      const res = await fx.svc.get('/v1/rank/volume-usd?group=major-cex&start_date=2026-06-26&end_date=2026-06-30');
      const body = (await res.json()) as RankBody;
      expect(body.unranked).toEqual(['kraken']);
      expect(body.rows.map((r) => r.rank)).toEqual([1, 2, 3, 4, 5]);
      const shares = body.rows.map((r) => r.share_of_total as number);
      expect(
        near(
          shares.reduce((a, s) => a + s, 0),
          100,
        ),
      ).toBe(true);
      const avg = (await (
        await fx.svc.get(
          '/v1/rank/volume-usd?group=major-cex&start_date=2026-06-01&end_date=2026-06-30&aggregation=avg',
        )
      ).json()) as RankBody;
      expect(avg.rows.every((r) => r.share_of_total === null)).toBe(true);
    });

    it('gives no percent change from a zero previous value, and ranks such a member after the others', async () => {
      const res = await fx.svc.get(
        '/v1/rank/volume-usd?group=major-cex&start_date=2026-06-01&end_date=2026-06-05&by=percent_change',
      );
      const body = (await res.json()) as RankBody;
      const upbit = body.rows.find((r) => r.slug === 'Upbit')!;
      expect(upbit.previous_value).toBe(0);
      expect(upbit.change).toBe(upbit.value);
      expect(upbit.change_percent).toBeNull();
      expect(upbit.rank).toBe(body.rows.length);
    });

    it('ranks as of an instant from the values served then', async () => {
      const then = await fx.daily('volume-usd', VENUES, fx.asOf);
      for (const c of CASES.slice(0, 4)) {
        const o = { ...DEFAULTS, ...c.options };
        const query = rankQuery(c.from, c.to, c.options, { group: 'major-cex', as_of: fx.asOf });
        const body = (await (await fx.svc.get(`/v1/rank/volume-usd?${query}`)).json()) as RankBody;
        expectRows(
          body.rows.map(fromRest),
          referenceRanking(then, VENUES, c.from, c.to, o).rows,
          `as of ${JSON.stringify(c)}`,
        );
      }
    });

    it('answers GraphQL rank as REST does', async () => {
      const rest = (await (
        await fx.svc.get(
          '/v1/rank/volume-usd?project=binance,okx,kraken,coinbase&start_date=2026-06-01&end_date=2026-06-30&by=percent_change&top=3',
        )
      ).json()) as RankBody;
      const res =
        await fx.svc.graphql(`{ rank(name: volume_usd, projects: [binance, okx, kraken, coinbase], from: "2026-06-01",
        to: "2026-06-30", by: PERCENT_CHANGE, top: 3) { from to previousFrom previousTo
        rows { rank project slug value previousValue previousRank change changePercent shareOfTotal } unranked } }`);
      const { rank } = (
        (await res.json()) as { data: { rank: Record<string, unknown> & { rows: Record<string, unknown>[] } } }
      ).data;
      expect([rank.from, rank.to, rank.previousFrom, rank.previousTo]).toEqual([
        rest.start_date,
        rest.end_date,
        rest.previous_start_date,
        rest.previous_end_date,
      ]);
      expect(rank.unranked).toEqual(rest.unranked.map(enumName));
      expect(rank.rows).toEqual(
        rest.rows.map((r) => ({
          rank: r.rank,
          project: enumName(r.slug as string),
          slug: r.slug,
          value: r.value,
          previousValue: r.previous_value,
          previousRank: r.previous_rank,
          change: r.change,
          changePercent: r.change_percent,
          shareOfTotal: r.share_of_total,
        })),
      );
    });

    it('refuses bad parameters, naming each', async () => {
      const window = 'start_date=2026-06-01&end_date=2026-06-30';
      const refusals: [string, string][] = [
        ['group=major-cex', 'start_date'],
        ['group=major-cex&start_date=2026-06-01', 'end_date'],
        [`group=major-cex&project=binance&${window}`, 'group'],
        [`group=nope&${window}`, 'group'],
        [`group=major-cex&by=size&${window}`, 'by'],
        [`group=major-cex&order=up&${window}`, 'order'],
        [`group=major-cex&top=0&${window}`, 'top'],
        [`group=major-cex&top=ten&${window}`, 'top'],
        [`group=major-cex&interval=week&${window}`, 'interval'],
        [`group=major-cex&aggregation=mean&${window}`, 'aggregation'],
        ['group=major-cex&start_date=0001-01-05&end_date=0001-01-10', 'start_date'],
      ];
      for (const [query, param] of refusals) {
        const res = await fx.svc.get(`/v1/rank/volume-usd?${query}`);
        expect(res.status, query).toBe(400);
        const body = (await res.json()) as { errors: { param: string }[] };
        expect(
          body.errors.map((e) => e.param),
          query,
        ).toContain(param);
      }
      for (const [args, name] of [
        ['group: major_cex, projects: [binance]', 'group'],
        ['top: 0', 'top'],
        ['top: 5000', 'top'],
      ]) {
        const res = await fx.svc.graphql(
          `{ rank(name: volume_usd, from: "2026-06-01", to: "2026-06-30", ${args}) { to } }`,
        );
        const body = (await res.json()) as { errors: { message: string; extensions: { code: string } }[] };
        expect(body.errors[0]!.extensions.code, args).toBe('BAD_USER_INPUT');
        expect(body.errors[0]!.message, args).toContain(name);
      }
    });
  });
}
