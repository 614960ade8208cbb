import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { migrate } from '../src/db/migrate.js';
import type { Store } from '../src/db/store.js';
import { syncCatalog } from '../src/db/sync-catalog.js';
import { upsertPoints } from '../src/db/write-points.js';
import { projectId } from './support/project-id.js';
import { startTestService, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

/**
 * DataPoint.status and `/v1/export?include=status`: days written with controlled write times
 * (the write clock set per transaction, relative to the database's clock, no sleeping), and
 * the status each must have, worked out by hand from the rule: PROVISIONAL while fewer than
 * `stabilizationDays` have passed since the day's first write, else REVISED when written more
 * than once, else FINAL.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** etf-flows-btc: stabilizationDays 1. Each write: [day, value, hours before the database's now]. */
const ETF_WRITES: [string, number, number][] = [
  ['2026-01-01', 1, 240], // once, 10 days ago: FINAL
  ['2026-01-02', 2, 240], // 10 days ago, then revised 9 days ago: REVISED
  ['2026-01-03', 3, 2], // 2 hours ago: PROVISIONAL
  ['2026-01-04', 4, 20], // 20 hours ago, revised 1 hour ago: still PROVISIONAL
  ['2026-01-05', 5, 30], // 30 hours ago, past its day: FINAL
  ['2026-01-02', 2.5, 216],
  ['2026-01-04', 4.5, 1],
];
const ETF_STATUS = {
  '2026-01-01': 'FINAL',
  '2026-01-02': 'REVISED',
  '2026-01-03': 'PROVISIONAL',
  '2026-01-04': 'PROVISIONAL',
  '2026-01-05': 'FINAL',
};
/** price (stabilizationDays 0): never provisional. */
const PRICE_WRITES: [string, number, number][] = [
  ['2026-01-01', 10, 1],
  ['2026-01-02', 20, 1],
  ['2026-01-02', 21, 0.5],
];

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`point status on ${kind.name}`, { timeout: 60_000 }, () => {
    let service: TestService;
    let now: number;

    const write = async (store: Store, metric: string, slug: string, writes: [string, number, number][]) => {
      const id = await projectId(store, metric, slug);
      for (const [day, value, hoursAgo] of writes) {
        await store.transaction(async (tx) => {
          await tx.query(`select set_config('metrics.write_time', $1, true)`, [
            new Date(now - hoursAgo * HOUR).toISOString(),
          ]);
          await upsertPoints(tx, [{ projectId: id, day, value, extra: null }]);
        });
      }
    };

    beforeAll(async () => {
      const opened = await kind.open();
      await migrate(opened.store);
      await syncCatalog(opened.store, CATALOG);
      const [row] = await opened.store.query<{ ms: string }>(
        `select (extract(epoch from clock_timestamp()) * 1000)::bigint::text as ms`,
      );
      now = Number(row!.ms);
      await write(opened.store, 'etf-flows-btc', 'bitcoin', ETF_WRITES);
      await write(opened.store, 'price', 'ethereum', PRICE_WRITES);
      service = await startTestService(kind, {}, { store: opened });
    }, 180_000);

    afterAll(async () => {
      await service?.stop();
    });

    const statuses = async (query: string): Promise<Record<string, string | null>> => {
      const res = await service.graphql(query);
      const body = (await res.json()) as {
        data?: { metric: { series: { points: { date: string; status: string | null }[] }[] } };
        errors?: unknown;
      };
      expect(body.errors).toBeUndefined();
      return Object.fromEntries(body.data!.metric.series[0]!.points.map((p) => [p.date, p.status]));
    };

    it('gives each stored day its status, plain and through the field-by-field path', async () => {
      const range = 'from: "2026-01-01", to: "2026-01-05"';
      expect(
        await statuses(
          `{ metric(name: etf_flows_btc, projects: [bitcoin], ${range}) { series { points { date status } } } }`,
        ),
      ).toEqual(ETF_STATUS);
      expect(
        await statuses(
          `{ metric(name: etf_flows_btc, projects: [bitcoin], ${range}) { series { points { __typename date status } } } }`,
        ),
      ).toEqual(ETF_STATUS);
      expect(
        await statuses(`{ metric(name: price, projects: [ethereum], ${range}) { series { points { date status } } } }`),
      ).toEqual({ '2026-01-01': 'FINAL', '2026-01-02': 'REVISED' });
    });

    it('judges status as of an instant, from what was written by then', async () => {
      const at = (hoursAgo: number) => new Date(now - hoursAgo * HOUR).toISOString();
      const q = (asOf: string) =>
        `{ metric(name: etf_flows_btc, projects: [bitcoin], from: "2026-01-01", to: "2026-01-05", ` +
        `asOf: "${asOf}") { series { points { date status } } } }`;
      // 9.5 days ago: 01-01 and 01-02 were half a day old, unrevised: both provisional.
      expect(await statuses(q(at(228)))).toEqual({ '2026-01-01': 'PROVISIONAL', '2026-01-02': 'PROVISIONAL' });
      // 8 days ago: 01-02 revised (9 days ago), both past their day.
      expect(await statuses(q(at(192)))).toEqual({ '2026-01-01': 'FINAL', '2026-01-02': 'REVISED' });
    });

    it('gives a bucket the most provisional status of its days', async () => {
      const res = await service.graphql(
        `{ metric(name: etf_flows_btc, projects: [bitcoin], from: "2025-12-29", to: "2026-01-11", interval: WEEK, ` +
          `fill: ZERO) { series { points { date count status } } } }`,
      );
      const body = (await res.json()) as { data: { metric: { series: { points: unknown[] }[] } } };
      // Week of 2025-12-29 holds 01-01..01-04 (01-03 provisional); week of 2026-01-05 holds 01-05 only.
      expect(body.data.metric.series[0]!.points).toEqual([
        { date: '2025-12-29', count: 4, status: 'PROVISIONAL' },
        { date: '2026-01-05', count: 1, status: 'FINAL' },
      ]);
    });

    it('adds a status column to exports only with include=status', async () => {
      const base = '/v1/export?metric=etf-flows-btc&project=bitcoin&start_date=2026-01-01&end_date=2026-01-05';
      const values = { '2026-01-01': 1, '2026-01-02': 2.5, '2026-01-03': 3, '2026-01-04': 4.5, '2026-01-05': 5 };
      const days = Object.keys(values) as (keyof typeof values)[];
      const plain = await (await service.get(base)).text();
      expect(plain).toBe(
        `metric,project,date,value\n${days.map((d) => `etf-flows-btc,bitcoin,${d},${values[d]}\n`).join('')}`,
      );
      expect(await (await service.get(`${base}&include=status`)).text()).toBe(
        `metric,project,date,value,status\n` +
          days.map((d) => `etf-flows-btc,bitcoin,${d},${values[d]},${ETF_STATUS[d]}\n`).join(''),
      );
      expect(await (await service.get(`${base}&include=status&extra=include`)).text()).toBe(
        `metric,project,date,value,extra_json,status\n` +
          days.map((d) => `etf-flows-btc,bitcoin,${d},${values[d]},,${ETF_STATUS[d]}\n`).join(''),
      );
      const ndjson = await (await service.get(`${base}&format=ndjson&include=status`)).text();
      expect(
        ndjson
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l)),
      ).toEqual(
        days.map((d) => ({
          metric: 'etf-flows-btc',
          project: 'bitcoin',
          date: d,
          value: values[d],
          status: ETF_STATUS[d],
        })),
      );
      const plainNdjson = await (await service.get(`${base}&format=ndjson`)).text();
      expect(plainNdjson).toBe(
        days.map((d) => `{"metric":"etf-flows-btc","project":"bitcoin","date":"${d}","value":${values[d]}}\n`).join(''),
      );
    });

    it('refuses an unknown include, naming the parameter', async () => {
      for (const include of ['stat', 'status,status', '']) {
        const res = await service.get(`/v1/export?metric=etf-flows-btc&project=bitcoin&include=${include}`);
        expect(res.status).toBe(400);
        const body = (await res.json()) as { errors: { param: string }[] };
        expect(body.errors.map((e) => e.param)).toEqual(['include']);
      }
    });

    it('keeps the write times the test set (sanity of the fixture)', async () => {
      const [row] = await service.running.services.store.query<{ n: number }>(
        `select count(*)::integer as n from point_history h join project p on p.id = h.project_id
         where h.valid_to > to_timestamp($1::double precision / 1000) - interval '1 second'`,
        [now - DAY * 20],
      );
      expect(row!.n).toBe(3);
    });
  });
}
