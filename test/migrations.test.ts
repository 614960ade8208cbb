import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { migrate, pendingMigrations } from '../src/db/migrate.js';
import { openPostgres } from '../src/db/open-postgres.js';
import { seriesStatement, type PointLayout } from '../src/series/series-sql.js';
import type { SeriesOptions } from '../src/series/series-options.js';
import { syncCatalog } from '../src/db/sync-catalog.js';
import { seedDatabase } from '../src/seed/seed-database.js';
import { projectIds } from './support/project-id.js';
import { STORE_KINDS, type StoreUnderTest } from './support/stores.js';

/** Every migration file, read from the folder rather than from the code under test. */
const ALL_MIGRATIONS = readdirSync(new URL('../db/migrations/', import.meta.url))
  .filter((f) => f.endsWith('.sql'))
  .sort();

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`migrations on ${kind.name}`, () => {
    let db: StoreUnderTest;
    beforeAll(async () => {
      db = await kind.open();
    });
    afterAll(async () => db?.dispose());

    it('applies every migration once and nothing on the second run', async () => {
      const first = await migrate(db.store);
      expect(first.applied).toEqual(ALL_MIGRATIONS);
      expect(first.applied.slice(0, 5)).toEqual([
        '0001_catalog_and_points.sql',
        '0002_api_keys.sql',
        '0003_dataset_version.sql',
        '0004_key_rate_limits.sql',
        '0005_canonical_values.sql',
      ]);
      expect(await migrate(db.store)).toEqual({ applied: [] });
      expect(await pendingMigrations(db.store)).toEqual([]);
      const recorded = await db.store.query<{ version: string }>(
        'select version from schema_migration order by version',
      );
      expect(recorded.map((r) => r.version)).toEqual(first.applied);
    });

    it(
      'repairs points updated by hand before 0010 stamped every update, so they ' +
        'can be removed and read as of any instant',
      async () => {
        await migrate(db.store);
        await syncCatalog(db.store, CATALOG);
        const point = `project_id = (select id from project order by id limit 1) and day = '2020-01-01'`;
        // The store as 0009 left it: an import's write, then a value corrected by hand in a later transaction.
        await db.store.exec(`drop trigger point_update_stamped on point; drop function stamp_point_update();
        delete from schema_migration where version = '0010_stamp_every_update.sql'`);
        await db.store.exec(
          `insert into point (project_id, day, value) values ((select id from project ` +
            `order by id limit 1), '2020-01-01', 1)`,
        );
        await new Promise((resolve) => setTimeout(resolve, 5));
        await db.store.exec(`update point set value = 2 where ${point}`);
        const [{ updated }] = (await db.store.query<{ updated: string }>(
          `select valid_to::text as updated from point_history where ${point}`,
        )) as [{ updated: string }];
        const changes = await db.store.query('select seq from point_change');
        expect(await migrate(db.store)).toEqual({ applied: ['0010_stamp_every_update.sql'] });
        expect(await db.store.query(`select value::text, written_at::text from point where ${point}`)).toEqual([
          { value: '2', written_at: updated },
        ]);
        expect(await db.store.query('select seq from point_change')).toEqual(changes); // the repair is no write
        await db.store.exec(`delete from point where ${point}`); // refused on point_history's key before
        expect(
          await db.store.query(`select value::text from point_history where ${point} order by valid_from`),
        ).toEqual([{ value: '1' }, { value: '2' }]);
      },
    );

    const DAILY: SeriesOptions = { interval: 'day', aggregation: 'avg', fill: 'none', transform: null, window: null };
    const explain = async (layout: PointLayout, options: SeriesOptions, asOf: string | null = null, change = '') => {
      await seedDatabase(db.store, CATALOG, { years: 1, lastDay: 20_600 });
      await db.store.exec(`${change}; analyze`);
      const ids = [...(await projectIds(db.store, 'etf-aum-change-pct')).values()].slice(0, 5);
      const { text, parameters } = seriesStatement({ layout, options, extraFields: [], asOf: asOf !== null });
      const params = parameters({
        projectIds: ids,
        slugs: ids.map(String),
        from: '2026-01-01',
        to: '2026-03-01',
        metric: 'etf-aum-change-pct',
        options,
        asOf,
      });
      return (await db.store.query<{ 'QUERY PLAN': string }>(`explain ${text}`, params))
        .map((r) => r['QUERY PLAN'])
        .join('\n');
    };

    it.each([
      ['REST', 'rest'],
      ['GraphQL', { graphql: ['date', 'value'] }],
    ] as const)(
      'reads stored points of several projects over a range with one primary-key range scan per project (%s)',
      async (_api, layout) => {
        const plan = await explain(layout, DAILY);
        expect(plan).toMatch(/Index Scan using point_pkey on point pt/);
        expect(plan).toMatch(
          /Index Cond: \(\(project_id = r\.project_id\) AND \(day >= '2026-01-01'::date\) AND \(day <= '2026-03-01'::date\)\)/,
        );
        expect(plan).not.toMatch(/Seq Scan on point|Sort/);
      },
    );

    it(
      'reads a bucketed, filled, transformed series with index probes and one ' +
        'primary-key range scan per project, never a scan of the table',
      async () => {
        const plan = await explain(
          { graphql: ['date', 'value', 'count'] },
          { interval: 'month', aggregation: 'avg', fill: 'previous', transform: 'moving_average', window: 3 },
        );
        expect(plan).toMatch(
          /Index Scan using point_pkey on point pt(_\d+)? .*\n\s+Index Cond: \(\(project_id = r\.project_id\) AND \(day >= w(_\d+)?\.warm_lo\) AND \(day <= w(_\d+)?\.hi\)\)/,
        );
        // The first and last stored day: probes at either end of the key, not reads of the series.
        expect(plan.match(/Index Only Scan( Backward)? using point_pkey/g)?.length).toBeGreaterThanOrEqual(2);
        expect(plan).not.toMatch(/Seq Scan on point/);
      },
    );

    it(
      'reads as of an instant with one primary-key range scan per project in ' +
        'the current table and one in the history',
      async () => {
        // Every point of the metric revised once: its history holds as many rows as its current
        // points. Only that metric's points: all of them took over 5 s on a busy machine.
        const ids = [...(await projectIds(db.store, 'etf-aum-change-pct')).values()];
        const reviseAll = `update point set value = value + 1 where project_id in (${ids.join(', ')})`;
        const plan = await explain('rest', DAILY, '2026-01-15T00:00:00.000000Z', reviseAll);
        // A plain or a bitmap scan of the key's range: the planner picks by the share of revised rows.
        expect(plan).toMatch(
          /(Index Scan using point_pkey on point c|Bitmap Heap Scan on point c[^\n]*\n(\s+(Recheck Cond|Filter):[^\n]*\n)*\s+-> {2}Bitmap Index Scan on point_pkey) .*\n\s+Index Cond: \(\(project_id = r\.project_id\) AND \(day >= '2026-01-01'::date\) AND \(day <= '2026-03-01'::date\)\)/,
        );
        expect(plan).toMatch(
          /Index Scan using point_history_pkey on point_history h .*\n\s+Index Cond: \(\(project_id = r\.project_id\) AND \(day >= '2026-01-01'::date\) AND \(day <= '2026-03-01'::date\)/,
        );
        expect(plan).not.toMatch(/Seq Scan on point/);
      },
    );
  });
}

describe.skipIf(!STORE_KINDS[1]!.available)('migrations on a real server started twice at once', () => {
  it('lets two instances migrate concurrently: each migration is applied exactly once', async () => {
    const db = await STORE_KINDS[1]!.open();
    const second = openPostgres({ url: db.url!, poolSize: 2, statementTimeoutSeconds: 30, connectTimeoutSeconds: 5 });
    try {
      const [a, b] = await Promise.all([migrate(db.store), migrate(second)]);
      expect([...a.applied, ...b.applied].sort()).toEqual(ALL_MIGRATIONS);
      expect([a.applied.length, b.applied.length].sort()).toEqual([0, ALL_MIGRATIONS.length]);
      const rows = await db.store.query<{ n: number }>('select count(*)::integer as n from schema_migration');
      expect(rows[0]?.n).toBe(ALL_MIGRATIONS.length);
    } finally {
      await second.close();
      await db.dispose();
    }
  });
});
