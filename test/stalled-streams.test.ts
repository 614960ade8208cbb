import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { migrate } from '../src/db/migrate.js';
import { openPostgres } from '../src/db/open-postgres.js';
import { seedDatabase } from '../src/seed/seed-database.js';
import { startTestService, TEST_KEY, TEST_LAST_DAY, type TestService } from './support/service.js';
import { createScratchDatabase, STORE_KINDS, TEST_DATABASE_URL, type ScratchDatabase } from './support/stores.js';

const postgres = STORE_KINDS[1]!;
const POOL_SIZE = 4;
const STALLED = 16;

// Answers far larger than what a socket's buffers hold (about 4 MB on loopback), streamed
// through cursors: four metrics' every project for ten years (about 30 MB of CSV), and 76
// projects for ten years (about 11 MB of JSON).
const EXPORT =
  `/v1/export?metric=etf-aum-change-pct,transaction-fail-total,treasury-market-cap-usd,outstanding-mnav&start_date=2016-07-01&end_date=` +
  `${TEST_LAST_DAY}`;
const WIDE = `/v1/metrics/etf-aum-change-pct?start_date=2016-07-01&end_date=${TEST_LAST_DAY}`;
const SMALL = '/v1/metrics/token-price-usd?project=ethereum,solana&start_date=2026-01-01&end_date=2026-03-31';

/** Asks for `path` on a socket of its own and never reads the answer. */
function askAndNeverRead(url: string, path: string): Socket {
  const socket = connect(Number(new URL(url).port), '127.0.0.1');
  socket.pause();
  socket.on('error', () => {});
  socket.write(`GET ${path} HTTP/1.1\r\nhost: test\r\nx-api-key: ${TEST_KEY}\r\n\r\n`);
  return socket;
}

describe.skipIf(!postgres.available)('clients that never read a large streamed answer', () => {
  let database: ScratchDatabase;
  let service: TestService;
  beforeAll(async () => {
    database = await createScratchDatabase(TEST_DATABASE_URL!);
    // Short timeouts: a request left waiting for a connection gets its 503 after 4 s.
    const seeding = openPostgres({
      url: database.url,
      poolSize: POOL_SIZE,
      statementTimeoutSeconds: 60,
      connectTimeoutSeconds: 5,
    });
    const seedStarted = Date.now();
    await migrate(seeding);
    await seedDatabase(seeding, CATALOG, { years: 10, lastDay: Date.parse(`${TEST_LAST_DAY}T00:00:00Z`) / 86_400_000 });
    await seeding.exec('analyze');
    console.log(`seeded in ${(Date.now() - seedStarted) / 1000} s`);
    await seeding.close();
    const store = openPostgres({
      url: database.url,
      poolSize: POOL_SIZE,
      statementTimeoutSeconds: 3,
      connectTimeoutSeconds: 1,
    });
    service = await startTestService(
      postgres,
      { RESPONSE_CACHE_MB: '0' },
      { store: { store, dispose: () => store.close(), url: database.url } },
    );
  }, 400_000);
  afterAll(async () => {
    await service?.stop();
    await database?.drop();
  });

  it(`leave short reads answered at their usual pace: ${STALLED} stall beside a pool of ${POOL_SIZE}`, async () => {
    // The export as CSV and as an Arrow stream (about 12 MB), every other one a wide read.
    const stalled = Array.from({ length: STALLED }, (_, i) =>
      askAndNeverRead(service.url, [EXPORT, WIDE, `${EXPORT}&format=arrow`, WIDE][i % 4]!),
    );
    try {
      // Let the stalled answers fill their sockets and start waiting for a drain that never comes.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      // Asked on a connection of its own: the service's pool is what is under test.
      const probe = openPostgres({
        url: database.url,
        poolSize: 1,
        statementTimeoutSeconds: 5,
        connectTimeoutSeconds: 5,
      });
      const streaming = await probe
        .query<{ n: number }>(
          `select count(*)::integer as n from pg_stat_activity
          where datname = current_database() and application_name = 'metrics-service' and query like 'fetch %'`,
        )
        .finally(() => probe.close());
      const outcomes: { status: number; ms: number }[] = [];
      const until = Date.now() + 6_000;
      while (Date.now() < until) {
        const started = Date.now();
        const res = await service.fetch(SMALL, { signal: AbortSignal.timeout(10_000) }).catch(() => undefined);
        await res?.arrayBuffer();
        outcomes.push({ status: res?.status ?? 0, ms: Date.now() - started });
      }
      const sorted = outcomes.map((o) => o.ms).sort((a, b) => a - b);
      const statuses = [...new Set(outcomes.map((o) => o.status))].join(', ');
      console.log(
        `short reads beside ${STALLED} stalled streams: ${outcomes.length} (status ` +
          `${statuses}), median ${sorted[sorted.length >> 1]} ms, max ${sorted.at(-1)}` +
          ` ms`,
      );
      // Every short read is answered, each well within 5 s: streams hold half the pool at most.
      expect(outcomes.length).toBeGreaterThan(5);
      expect(outcomes.filter((o) => o.status !== 200 || o.ms > 5_000)).toEqual([]);
      expect(streaming[0]!.n).toBeGreaterThan(0);
      expect(streaming[0]!.n).toBeLessThanOrEqual(POOL_SIZE / 2);
    } finally {
      for (const socket of stalled) socket.destroy();
    }
  }, 60_000);
});
