import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { migrate } from '../src/db/migrate.js';
import { openPostgres } from '../src/db/open-postgres.js';
import { seedDatabase } from '../src/seed/seed-database.js';
import { startTestService, TEST_LAST_DAY, type TestService } from './support/service.js';
import { createScratchDatabase, STORE_KINDS, TEST_DATABASE_URL, type ScratchDatabase } from './support/stores.js';

/**
 * A PostgreSQL server's own settings must not change an answer. Dates are written as text
 * by PostgreSQL (`day::text`), whose form follows the session's DateStyle: a server or
 * database set to another one ('SQL, DMY' is a European administrator's choice) made
 * every date of every answer `30/06/2026`.
 */
const server = STORE_KINDS.find((k) => k.name === 'postgres')!;

describe.skipIf(!server.available)('a PostgreSQL server whose DateStyle is not ISO', { timeout: 60_000 }, () => {
  let db: ScratchDatabase;
  let service: TestService;

  beforeAll(async () => {
    db = await createScratchDatabase(TEST_DATABASE_URL!);
    const admin = postgres(TEST_DATABASE_URL!, { max: 1, onnotice: () => {} });
    await admin.unsafe(`alter database ${new URL(db.url).pathname.slice(1)} set datestyle = 'SQL, DMY'`);
    await admin.end();
    const store = openPostgres({ url: db.url, poolSize: 4, statementTimeoutSeconds: 5, connectTimeoutSeconds: 5 });
    await migrate(store);
    await seedDatabase(store, CATALOG, { years: 1, lastDay: Date.parse(`${TEST_LAST_DAY}T00:00:00Z`) / 86_400_000 });
    service = await startTestService(server, {}, { store: { store, url: db.url, dispose: async () => store.close() } });
  });

  afterAll(async () => {
    await service?.stop();
    await db?.drop();
  });

  it('still answers REST, buckets, the catalog and GraphQL with YYYY-MM-DD dates', async () => {
    const daily = (await (
      await service.get(`/v1/metrics/volume-usd?project=binance&start_date=2026-06-29&end_date=${TEST_LAST_DAY}`)
    ).json()) as Record<string, { date: string }[]>;
    expect(daily.binance!.map((p) => p.date)).toEqual(['2026-06-29', TEST_LAST_DAY]);
    const weekly = (await (
      await service.get(
        '/v1/metrics/volume-usd?project=binance&start_date=2026-06-01&end_date=2026-06-10&interval=week',
      )
    ).json()) as Record<string, { date: string }[]>;
    expect(weekly.binance!.map((p) => p.date)).toEqual(['2026-06-01', '2026-06-08']);
    const catalog = (await (await service.get('/v1/metrics')).json()) as {
      metrics: { projects: { lastDate: string | null }[] }[];
    };
    expect(catalog.metrics[0]!.projects[0]!.lastDate).toBe(TEST_LAST_DAY);
    const res = await service.graphql(
      `{ metric(name: volume_usd, projects: [binance], from: "${TEST_LAST_DAY}", ` +
        `interval: MONTH) { series { lastDate points { date } } } }`,
    );
    expect(await res.json()).toEqual({
      data: { metric: { series: [{ lastDate: TEST_LAST_DAY, points: [{ date: '2026-06-01' }] }] } },
      extensions: { cost: { units: 1 } },
    });
  });
});
