import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { migrate, pendingMigrations } from '../src/db/migrate.js';
import { openPostgres } from '../src/db/open-postgres.js';
import { READ_SERIES_SQL, readSeries } from '../src/db/read-series.js';
import { seedDatabase } from '../src/seed/seed-database.js';
import { STORE_KINDS, type StoreUnderTest } from './support/stores.js';

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`migrations on ${kind.name}`, () => {
    let db: StoreUnderTest;
    beforeAll(async () => {
      db = await kind.open();
    });
    afterAll(async () => db?.dispose());

    it('applies every migration once and nothing on the second run', async () => {
      const first = await migrate(db.store);
      expect(first.applied).toEqual(['0001_catalog_and_points.sql', '0002_api_keys.sql']);
      expect(await migrate(db.store)).toEqual({ applied: [] });
      expect(await pendingMigrations(db.store)).toEqual([]);
      const recorded = await db.store.query<{ version: string }>('select version from schema_migration order by version');
      expect(recorded.map((r) => r.version)).toEqual(first.applied);
    });

    it('reads one metric, several projects and a date range with one primary-key range scan and no sort', async () => {
      await seedDatabase(db.store, CATALOG, { years: 1, lastDay: 20_600 });
      await db.store.exec('analyze');
      const ids = (await db.store.query<{ id: number }>(
        `select p.id from project p join metric m on m.id = p.metric_id where m.name = 'etf-aum-change-pct' order by p.position limit 5`,
      )).map((r) => r.id);
      const plan = await db.store.query<{ 'QUERY PLAN': string }>(
        `explain ${READ_SERIES_SQL}`,
        [ids, '2026-01-01', '2026-03-01'],
      );
      const text = plan.map((r) => r['QUERY PLAN']).join('\n');
      expect(text).toMatch(/^Index Scan using point_pkey on point/);
      expect(text).toMatch(/Index Cond: \(\(project_id = ANY .*\) AND \(day >= .*\) AND \(day <= .*\)\)/);
      expect(text).not.toMatch(/Sort|Seq Scan/);
      const rows = await readSeries(db.store, { projectIds: ids, from: '2026-01-01', to: '2026-03-01' });
      const order = rows.map((r) => `${String(r.projectId).padStart(6, '0')}${r.date}`);
      expect(order).toEqual([...order].sort());
    });
  });
}

describe.skipIf(!STORE_KINDS[1]!.available)('migrations on a real server started twice at once', () => {
  it('lets two instances migrate concurrently: each migration is applied exactly once', async () => {
    const db = await STORE_KINDS[1]!.open();
    const second = openPostgres({ url: db.url!, poolSize: 2, statementTimeoutSeconds: 30, connectTimeoutSeconds: 5 });
    try {
      const [a, b] = await Promise.all([migrate(db.store), migrate(second)]);
      expect([...a.applied, ...b.applied].sort()).toEqual(['0001_catalog_and_points.sql', '0002_api_keys.sql']);
      expect([a.applied.length, b.applied.length].sort()).toEqual([0, 2]);
      const rows = await db.store.query<{ n: number }>('select count(*)::integer as n from schema_migration');
      expect(rows[0]?.n).toBe(2);
    } finally {
      await second.close();
      await db.dispose();
    }
  });
});
