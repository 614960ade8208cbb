import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectedLastDate, freshnessOf } from '../src/catalog/freshness.js';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { migrate } from '../src/db/migrate.js';
import type { Store } from '../src/db/store.js';
import { syncCatalog } from '../src/db/sync-catalog.js';
import { upsertPoints } from '../src/db/write-points.js';
import { projectId } from './support/project-id.js';
import { startTestService, TEST_LAST_DAY, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

/**
 * Freshness against a metric's schedule (day D is due by D + 1 at `expectedBy` UTC), with the
 * service clock the tests fix (noon of TEST_LAST_DAY, 2026-06-30) and write times set per
 * write. Expectations are worked out by hand.
 */

describe('the expected last day', () => {
  it('is the day before the date of now minus expectedBy', () => {
    const at = (iso: string) => new Date(iso);
    expect(expectedLastDate({ expectedBy: '02:00' }, at('2026-06-30T01:59:59Z'))).toBe('2026-06-28');
    expect(expectedLastDate({ expectedBy: '02:00' }, at('2026-06-30T02:00:00Z'))).toBe('2026-06-29');
    expect(expectedLastDate({ expectedBy: '00:00' }, at('2026-06-30T00:00:00Z'))).toBe('2026-06-29');
    expect(expectedLastDate({ expectedBy: '23:59' }, at('2026-06-30T23:58:00Z'))).toBe('2026-06-28');
    expect(expectedLastDate({ expectedBy: '06:00' }, at('2026-03-01T05:00:00Z'))).toBe('2026-02-27');
  });

  it('makes a series stale when its last day is older, with the days it lags', () => {
    const now = new Date('2026-06-30T12:00:00Z');
    const m = { expectedBy: '06:00' };
    expect(freshnessOf(m, { last: '2026-06-29', updatedAt: 'x' }, now)).toEqual({
      expectedLastDate: '2026-06-29',
      lastDate: '2026-06-29',
      lastWriteAt: 'x',
      lagDays: 0,
      stale: false,
    });
    expect(freshnessOf(m, { last: '2026-06-30', updatedAt: null }, now)).toMatchObject({ lagDays: 0, stale: false });
    expect(freshnessOf(m, { last: '2026-06-26', updatedAt: null }, now)).toMatchObject({ lagDays: 3, stale: true });
    expect(freshnessOf(m, { last: null, updatedAt: null }, now)).toMatchObject({ lagDays: null, stale: true });
  });
});

/** Writes: [metric, slug, day, write time]. */
const WRITES: [string, string, string, string][] = [
  // price (expectedBy 00:30): up to date at noon of 06-30.
  ['price', 'ethereum', '2026-06-28', '2026-06-29T00:20:00.000Z'],
  ['price', 'ethereum', '2026-06-29', '2026-06-30T00:25:00.000Z'],
  // etf-flows-btc (expectedBy 06:00): 06-28 and 06-29 missing, two days behind.
  ['etf-flows-btc', 'bitcoin', '2026-06-27', '2026-06-28T05:00:00.000Z'],
];

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`freshness on ${kind.name}`, { timeout: 60_000 }, () => {
    let service: TestService;

    const write = async (store: Store) => {
      for (const [metric, slug, day, at] of WRITES) {
        const id = await projectId(store, metric, slug);
        await store.transaction(async (tx) => {
          await tx.query(`select set_config('metrics.write_time', $1, true)`, [at]);
          await upsertPoints(tx, [{ projectId: id, day, value: 1, extra: null }]);
        });
      }
    };

    beforeAll(async () => {
      const opened = await kind.open();
      await migrate(opened.store);
      await syncCatalog(opened.store, CATALOG);
      await write(opened.store);
      service = await startTestService(kind, {}, { store: opened });
    }, 180_000);
    afterAll(async () => {
      await service?.stop();
    });

    const freshness = async (metric: string, slugs: string, asOf?: string) => {
      const res = await service.graphql(
        `{ metric(name: ${metric}, projects: [${slugs}]${asOf === undefined ? '' : `, asOf: "${asOf}"`}) ` +
          `{ series { slug freshness { expectedLastDate lastDate lastWriteAt lagDays stale } } } }`,
      );
      const body = (await res.json()) as {
        data: { metric: { series: { slug: string; freshness: Record<string, unknown> }[] } };
      };
      return Object.fromEntries(body.data.metric.series.map((s) => [s.slug, s.freshness]));
    };

    it('judges each series by the service clock (noon of the test day)', async () => {
      expect(TEST_LAST_DAY).toBe('2026-06-30');
      expect(await freshness('price', 'ethereum, solana')).toEqual({
        ethereum: {
          expectedLastDate: '2026-06-29',
          lastDate: '2026-06-29',
          lastWriteAt: '2026-06-30T00:25:00.000000Z',
          lagDays: 0,
          stale: false,
        },
        solana: { expectedLastDate: '2026-06-29', lastDate: null, lastWriteAt: null, lagDays: null, stale: true },
      });
      expect(await freshness('etf_flows_btc', 'bitcoin')).toEqual({
        bitcoin: {
          expectedLastDate: '2026-06-29',
          lastDate: '2026-06-27',
          lastWriteAt: '2026-06-28T05:00:00.000000Z',
          lagDays: 2,
          stale: true,
        },
      });
    });

    it('judges a series read as of an earlier instant at that instant', async () => {
      // 2026-06-29T12:00Z: 06-28 was due (00:30 that day) and written; 06-29 not yet written nor due.
      expect((await freshness('price', 'ethereum', '2026-06-29T12:00:00Z')).ethereum).toEqual({
        expectedLastDate: '2026-06-28',
        lastDate: '2026-06-28',
        lastWriteAt: '2026-06-29T00:20:00.000000Z',
        lagDays: 0,
        stale: false,
      });
      // 2026-06-29T00:10Z: 06-28 was not due yet (00:30), 06-27 was, and nothing was written.
      expect((await freshness('price', 'ethereum', '2026-06-29T00:10:00Z')).ethereum).toMatchObject({
        expectedLastDate: '2026-06-27',
        lastDate: null,
        stale: true,
      });
    });

    it('marks each project of /v1/metrics stale or not', async () => {
      const body = (await (await service.get('/v1/metrics')).json()) as {
        metrics: { name: string; projects: { slug: string; stale: boolean }[] }[];
      };
      const stale = (metric: string) =>
        Object.fromEntries(body.metrics.find((m) => m.name === metric)!.projects.map((p) => [p.slug, p.stale]));
      expect(stale('price')).toEqual({ arbitrum: true, ethereum: false, solana: true });
      expect(stale('etf-flows-btc')).toEqual({ bitcoin: true });
      expect(Object.values(stale('staking-apy')).every((s) => s)).toBe(true);
    });
  });
}
