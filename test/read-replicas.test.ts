import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { migrate } from '../src/db/migrate.js';
import { openPostgres } from '../src/db/open-postgres.js';
import type { Store } from '../src/db/store.js';
import { upsertPoints } from '../src/db/write-points.js';
import { seedDatabase } from '../src/seed/seed-database.js';
import { prerequisite } from './support/ci.js';
import { createPrivatePostgres, POSTGRES_BIN, type PrivatePostgres } from './support/private-postgres.js';
import { startTestService, TEST_LAST_DAY, type TestService } from './support/service.js';

/**
 * Reads from a streaming standby, as a real cluster on this machine: a private primary
 * and a standby made by pg_basebackup -R. Reads go to the standby; a write shows once
 * replayed; a stopped standby moves reads to the primary without a 5xx; a standby whose
 * replay is paused beyond the lag limit leaves rotation.
 */

const RUNS = prerequisite(POSTGRES_BIN !== undefined, 'PostgreSQL server binaries (initdb, pg_basebackup)', 'install them with apt-get install postgresql');
const PATH = '/v1/metrics/price?project=ethereum&start_date=2026-06-20';

interface Ready {
  status: string;
  replicas?: { replica: string; inUse: boolean; lagSeconds: number | null; reason?: string }[];
}

describe.skipIf(!RUNS)('reads from a streaming standby', { timeout: 120_000 }, () => {
  let primary: PrivatePostgres;
  let standby: PrivatePostgres;
  let store: Store;
  let service: TestService;
  let projectId: number;

  const ready = async () => (await (await service.get('/readyz', { key: null })).json()) as Ready;
  const until = async (what: string, test: (r: Ready) => boolean, ms = 15_000) => {
    const deadline = Date.now() + ms;
    for (;;) {
      const r = await ready();
      if (test(r)) return r;
      if (Date.now() > deadline) throw new Error(`${what} within ${ms} ms; readiness says ${JSON.stringify(r)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const value = async (day: string) => {
    const res = await service.get(`${PATH}`);
    expect(res.status).toBe(200);
    return ((await res.json()) as { ethereum: { date: string; value: number }[] }).ethereum.find((p) => p.date === day)?.value;
  };

  beforeAll(async () => {
    primary = await createPrivatePostgres();
    store = openPostgres({ url: primary.url, poolSize: 4, statementTimeoutSeconds: 10, connectTimeoutSeconds: 5 });
    await migrate(store);
    await seedDatabase(store, CATALOG, { years: 1, lastDay: Date.parse(`${TEST_LAST_DAY}T00:00:00Z`) / 86_400_000 });
    standby = await createPrivatePostgres(primary);
    service = await startTestService(
      { name: 'postgres', available: true, open: async () => ({ store, url: primary.url, dispose: async () => {} }) },
      { DATABASE_URL: primary.url, DATABASE_READ_URLS: standby.url, REPLICA_MAX_LAG_SECONDS: '2', RESPONSE_CACHE_MB: '0' },
      { store: { store, url: primary.url, dispose: async () => {} } },
    );
    projectId = service.running.services.state.directory!.idOf('price', 'ethereum')!;
  }, 120_000);
  afterAll(async () => {
    await service?.stop();
    await standby?.destroy();
    await primary?.destroy();
  });

  it('serves reads from the standby and lists it in readiness', async () => {
    const r = await until('the standby in rotation', (x) => x.replicas?.[0]?.inUse === true);
    expect(r.replicas![0]!.replica).toBe(`127.0.0.1:${standby.port}/postgres`);
    // Proof by divergence: with the standby's replay paused, a fresh write on the primary is
    // not in the answers while the standby serves them (well inside the 2 s lag limit).
    await upsertPoints(store, [{ projectId, day: '2026-06-21', value: '11.5', extra: null }]);
    await until('the standby to replay a write', () => true);
    for (const deadline = Date.now() + 5_000; (await value('2026-06-21')) !== 11.5;) expect(Date.now()).toBeLessThan(deadline);
    const sql = postgres(standby.url, { max: 1, onnotice: () => {} });
    try {
      await sql`select pg_wal_replay_pause()`;
      await upsertPoints(store, [{ projectId, day: '2026-06-21', value: '22.5', extra: null }]);
      expect(await value('2026-06-21')).toBe(11.5);
      await sql`select pg_wal_replay_resume()`;
    } finally {
      await sql.end();
    }
  });

  it('shows a write on the primary once the standby has replayed it', async () => {
    await upsertPoints(store, [{ projectId, day: '2026-06-25', value: '1234.5', extra: null }]);
    const deadline = Date.now() + 5_000;
    while ((await value('2026-06-25')) !== 1234.5) {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((r) => setTimeout(r, 50));
    }
  });

  it('moves reads to the primary when the standby stops, without a 5xx, and takes it back', async () => {
    const statuses = new Set<number>();
    const hammering = (async () => {
      for (let i = 0; i < 150; i++) statuses.add((await service.get(PATH)).status);
    })();
    await new Promise((r) => setTimeout(r, 50));
    await standby.stop('fast');
    await hammering;
    expect([...statuses]).toEqual([200]);
    const out = await until('the stopped standby out of rotation', (x) => x.replicas?.[0]?.inUse === false);
    expect(out.status).toBe('ready');
    expect(out.replicas![0]!.reason).toMatch(/failed/);
    await standby.start();
    await until('the standby back in rotation', (x) => x.replicas?.[0]?.inUse === true);
  });

  it('drops a standby whose replay is held back beyond the lag limit, and serves the new data from the primary', async () => {
    const sql = postgres(standby.url, { max: 1, onnotice: () => {} });
    try {
      await sql`select pg_wal_replay_pause()`;
      await upsertPoints(store, [{ projectId, day: '2026-06-26', value: '4321.25', extra: null }]);
      const out = await until('the paused standby out of rotation', (x) => x.replicas?.[0]?.inUse === false, 10_000);
      expect(out.replicas![0]!.reason).toMatch(/lags [\d.]+ s, more than 2 s|did not replay a write within 2 s/);
      expect(await value('2026-06-26')).toBe(4321.25);
      await sql`select pg_wal_replay_resume()`;
      await until('the resumed standby back in rotation', (x) => x.replicas?.[0]?.inUse === true);
      expect(await value('2026-06-26')).toBe(4321.25);
    } finally {
      await sql.end();
    }
  });
});
