import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { migrate } from '../src/db/migrate.js';
import { openPostgres } from '../src/db/open-postgres.js';
import type { Store } from '../src/db/store.js';
import { upsertPoints } from '../src/db/write-points.js';
import { seedDatabase } from '../src/seed/seed-database.js';
import { prerequisite } from './support/ci.js';
import { until as pollUntil } from './support/poll.js';
import { createPrivatePostgres, POSTGRES_BIN, type PrivatePostgres } from './support/private-postgres.js';
import { heard, startTestService, TEST_KEY, TEST_LAST_DAY, type TestService } from './support/service.js';
import { subscribeSse } from './support/sse.js';

/**
 * Reads from a streaming standby, as a real cluster on this machine: a private primary
 * and a standby made by pg_basebackup -R. Reads go to the standby; a write shows once
 * replayed; a stopped standby moves reads to the primary without a 5xx; a standby whose
 * replay is paused beyond the lag limit leaves rotation.
 */

const RUNS = prerequisite(
  POSTGRES_BIN !== undefined,
  'PostgreSQL server binaries (initdb, pg_basebackup)',
  'install them with apt-get install postgresql',
);
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

  const ready = async (on = service) => (await (await on.get('/readyz', { key: null })).json()) as Ready;
  const until = async (what: string, test: (r: Ready) => boolean, ms = 15_000, on = service) => {
    let last: Ready | undefined;
    const check = async () => {
      last = await ready(on);
      return test(last) && last;
    };
    return pollUntil(() => `${what}; readiness says ${JSON.stringify(last)}`, check, { withinMs: ms, everyMs: 100 });
  };
  const value = async (day: string, path = PATH, on = service) => {
    const res = await on.get(path);
    expect(res.status).toBe(200);
    return ((await res.json()) as { ethereum: { date: string; value: number }[] }).ethereum.find((p) => p.date === day)
      ?.value;
  };

  beforeAll(async () => {
    primary = await createPrivatePostgres();
    store = openPostgres({ url: primary.url, poolSize: 4, statementTimeoutSeconds: 10, connectTimeoutSeconds: 5 });
    await migrate(store);
    await seedDatabase(store, CATALOG, { years: 1, lastDay: Date.parse(`${TEST_LAST_DAY}T00:00:00Z`) / 86_400_000 });
    standby = await createPrivatePostgres(primary);
    service = await startTestService(
      { name: 'postgres', available: true, open: async () => ({ store, url: primary.url, dispose: async () => {} }) },
      {
        DATABASE_URL: primary.url,
        DATABASE_READ_URLS: standby.url,
        REPLICA_MAX_LAG_SECONDS: '2',
        RESPONSE_CACHE_MB: '0',
      },
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
    await pollUntil('the first write served', async () => (await value('2026-06-21')) === 11.5);
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
    await pollUntil('the write served', async () => (await value('2026-06-25')) === 1234.5, { everyMs: 50 });
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
    // A server that cannot be asked has no known lag: not the 0 of its last good check.
    expect(out.replicas![0]!.lagSeconds).toBeNull();
    await standby.start();
    await until('the standby back in rotation', (x) => x.replicas?.[0]?.inUse === true);
  });

  it(
    'drops a standby whose replay is held back beyond the lag limit, and serves ' + 'the new data from the primary',
    async () => {
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
    },
  );

  it('tells subscribers of a write within the lag limit while a standby does not answer at all', async () => {
    await until('the standby in rotation', (x) => x.replicas?.[0]?.inUse === true);
    const sub = await subscribeSse(
      service.url,
      'subscription { seriesUpdated(name: price, projects: [ethereum]) { from to } }',
      TEST_KEY,
    );
    await standby.freeze(true);
    try {
      await upsertPoints(store, [{ projectId, day: '2026-06-27', value: '77.5', extra: null }]);
      // The lag limit is 2 s: the event may wait that long for the standby, not for ever.
      expect(await sub.next(6_000)).toEqual({ data: { seriesUpdated: { from: '2026-06-27', to: '2026-06-27' } } });
      expect(await value('2026-06-27')).toBe(77.5);
      expect((await ready()).replicas![0]!.inUse).toBe(false);
    } finally {
      await standby.freeze(false);
      sub.close();
    }
    await until('the thawed standby back in rotation', (x) => x.replicas?.[0]?.inUse === true);
  });

  it('keeps a standby a second behind in rotation after the primary was idle longer than the lag limit', async () => {
    // A lag limit of 4 s (checks every 1.3 s). The standby's replay is held back for 1.5 s
    // after a write that ends 6 s without any: its lag is that 1.5 s, not the 6 s since the
    // last transaction it replayed committed.
    const own = openPostgres({ url: primary.url, poolSize: 4, statementTimeoutSeconds: 10, connectTimeoutSeconds: 5 });
    const patient = await startTestService(
      {
        name: 'postgres',
        available: true,
        open: async () => ({ store: own, url: primary.url, dispose: async () => {} }),
      },
      {
        DATABASE_URL: primary.url,
        DATABASE_READ_URLS: standby.url,
        REPLICA_MAX_LAG_SECONDS: '4',
        RESPONSE_CACHE_MB: '0',
      },
      { store: { store: own, url: primary.url, dispose: async () => {} } },
    );
    const sql = postgres(standby.url, { max: 1, onnotice: () => {} });
    try {
      await until('the standby in rotation', (x) => x.replicas?.[0]?.inUse === true, 15_000, patient);
      await new Promise((r) => setTimeout(r, 6_000));
      await sql`select pg_wal_replay_pause()`;
      await upsertPoints(store, [{ projectId, day: '2026-06-29', value: '6.25', extra: null }]);
      const seen: Ready[] = [];
      for (const until = Date.now() + 1_500; Date.now() < until; ) {
        seen.push(await ready(patient));
        await new Promise((r) => setTimeout(r, 100));
      }
      await sql`select pg_wal_replay_resume()`;
      for (const until = Date.now() + 1_500; Date.now() < until; ) {
        seen.push(await ready(patient));
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(seen.filter((r) => r.replicas![0]!.inUse === false).map((r) => r.replicas![0])).toEqual([]);
      expect(Math.max(...seen.map((r) => r.replicas![0]!.lagSeconds ?? Infinity))).toBeLessThan(4);
      expect(await value('2026-06-29', PATH, patient)).toBe(6.25);
    } finally {
      await sql`select pg_wal_replay_resume()`.catch(() => {});
      await sql.end();
      await patient.stop();
    }
  });

  it('answers reads in flight on a standby that stops answering from the primary, within the timeouts', async () => {
    // Timeouts of 1 s each: a standby that has not answered within 2 s is given up.
    const own = openPostgres({ url: primary.url, poolSize: 4, statementTimeoutSeconds: 10, connectTimeoutSeconds: 5 });
    const quick = await startTestService(
      {
        name: 'postgres',
        available: true,
        open: async () => ({ store: own, url: primary.url, dispose: async () => {} }),
      },
      {
        DATABASE_URL: primary.url,
        DATABASE_READ_URLS: standby.url,
        STATEMENT_TIMEOUT_SECONDS: '1',
        CONNECT_TIMEOUT_SECONDS: '1',
        RESPONSE_CACHE_MB: '0',
      },
      { store: { store: own, url: primary.url, dispose: async () => {} } },
    );
    const reads = [
      (day: string) => quick.get(`/v1/metrics/price?project=ethereum&start_date=${day}`),
      (day: string) =>
        quick.graphql(`{ metric(name: price, projects: [ethereum], from: "${day}") { series { points { date } } } }`),
      (day: string) => quick.get(`/v1/changes?since=${day}&limit=1`),
      (day: string) => quick.get(`/v1/export?metric=price&project=ethereum&start_date=${day}`),
    ];
    let thaw: (() => Promise<void>) | undefined;
    try {
      await until('the standby in rotation', (x) => x.replicas?.[0]?.inUse === true, 15_000, quick);
      // Every kind of read once on the standby first, so each has a connection open there.
      for (const read of reads) expect((await read('2026-06-01')).status).toBe(200);
      // Thawed after 8 s whatever happens: without a bound of its own, a read waits for that.
      thaw = await standby.freezeAtMost(8_000);
      const t0 = Date.now();
      const answers = await Promise.all(
        reads.map(async (read, i) => {
          const res = await read(`2026-06-0${2 + i}`);
          return { status: res.status, body: await res.text(), seconds: (Date.now() - t0) / 1000 };
        }),
      );
      for (const answer of answers) {
        expect(answer.status).toBe(200);
        expect(answer.body).not.toContain('"errors"');
        expect(answer.seconds).toBeLessThan(5);
      }
      expect((await ready(quick)).replicas![0]!.inUse).toBe(false);
    } finally {
      await thaw?.();
      await quick.stop();
    }
    await until('the thawed standby back in rotation', (x) => x.replicas?.[0]?.inUse === true);
  });

  it(
    'takes a standby back into rotation only once it has replayed every write ' + 'announced while it was out',
    async () => {
      // A lag limit of 9 s (checks every 3 s) and a standby that applies each write 5 s after
      // its commit: restarted, it replays the first of two writes made while it was stopped,
      // so its lag is within the limit, while the second, already announced, is not there yet.
      // Its own pool: stopping a service closes its store.
      const own = openPostgres({
        url: primary.url,
        poolSize: 4,
        statementTimeoutSeconds: 10,
        connectTimeoutSeconds: 5,
      });
      const roomy = await startTestService(
        {
          name: 'postgres',
          available: true,
          open: async () => ({ store: own, url: primary.url, dispose: async () => {} }),
        },
        { DATABASE_URL: primary.url, DATABASE_READ_URLS: standby.url, REPLICA_MAX_LAG_SECONDS: '9' },
        { store: { store: own, url: primary.url, dispose: async () => {} } },
      );
      const setDelay = async (delay: string | null) => {
        const sql = postgres(standby.url, { max: 1, onnotice: () => {} });
        try {
          if (delay === null) await sql.unsafe('alter system reset recovery_min_apply_delay');
          else await sql.unsafe(`alter system set recovery_min_apply_delay = '${delay}'`);
          await sql`select pg_reload_conf()`;
        } finally {
          await sql.end();
        }
      };
      try {
        await until('the standby in rotation', (x) => x.replicas?.[0]?.inUse === true, 15_000, roomy);
        await setDelay('5s');
        await standby.stop('fast');
        await until('the stopped standby out of rotation', (x) => x.replicas?.[0]?.inUse === false, 15_000, roomy);
        const t0 = Date.now();
        await heard(roomy, () => upsertPoints(store, [{ projectId, day: '2026-06-28', value: '1.25', extra: null }]));
        await new Promise((r) => setTimeout(r, t0 + 3_500 - Date.now()));
        const sub = await subscribeSse(
          roomy.url,
          'subscription { seriesUpdated(name: price, projects: [ethereum]) { from } }',
          TEST_KEY,
        );
        try {
          await upsertPoints(store, [{ projectId, day: '2026-06-28', value: '2.5', extra: null }]);
          await sub.next(5_000);
        } finally {
          sub.close();
        }
        await standby.start();
        const fixed = `${PATH.replace('2026-06-20', '2026-06-28')}`;
        let inRotation = false;
        for (let i = 0; Date.now() < t0 + 10_000; i++) {
          // Each start date its own request, so the response cache cannot hide what the standby shows.
          const uncached =
            `/v1/metrics/price?project=ethereum&start_date=` +
            `${new Date(Date.parse('2026-01-01') + i * 86_400_000).toISOString().slice(0, 10)}`;
          expect(await value('2026-06-28', uncached, roomy)).toBe(2.5);
          expect(await value('2026-06-28', fixed, roomy)).toBe(2.5);
          inRotation ||= (await ready(roomy)).replicas![0]!.inUse;
          await new Promise((r) => setTimeout(r, 100));
        }
        await until('the restarted standby back in rotation', (x) => x.replicas?.[0]?.inUse === true, 15_000, roomy);
        expect(await value('2026-06-28', fixed, roomy)).toBe(2.5);
        expect(inRotation || (await ready(roomy)).replicas![0]!.inUse).toBe(true);
      } finally {
        await standby.start().catch(() => {});
        await setDelay(null);
        await roomy.stop();
      }
    },
  );

  it('answers a read the standby cancels for a conflict with recovery from the primary, never with a 5xx', async () => {
    await until('the standby in rotation', (x) => x.replicas?.[0]?.inUse === true);
    const onStandby = postgres(standby.url, { max: 1, onnotice: () => {} });
    const locker = postgres(primary.url, { max: 1, onnotice: () => {} });
    // A standby that never holds replay back for its readers cancels a read at once when the
    // primary's WAL needs what it holds (here a lock on the point table, as a VACUUM truncating it takes).
    await onStandby.unsafe('alter system set max_standby_streaming_delay = 0');
    await onStandby`select pg_reload_conf()`;
    const conflicts = async () =>
      Number(
        (
          await onStandby<
            { n: string }[]
          >`select confl_lock + confl_snapshot as n from pg_stat_database_conflicts where datname = current_database()`
        )[0]!.n,
      );
    const answers = new Map<string, number>();
    let reading = true;
    try {
      const before = await conflicts();
      const readers = Promise.all(
        Array.from({ length: 6 }, async (_, reader) => {
          for (let i = 0; reading; i++) {
            const from = `2026-0${1 + ((i + reader) % 5)}-01`;
            const res =
              i % 2 === 0
                ? await service.get(`/v1/metrics/volume-usd?start_date=${from}`)
                : await service.graphql(
                    `{ metric(name: volume_usd, from: "${from}") { series { slug points { date value } } } }`,
                  );
            const body = await res.text();
            const answer = `${res.status}${body.includes('"errors"') ? ' with errors' : ''}`;
            answers.set(answer, (answers.get(answer) ?? 0) + 1);
          }
        }),
      );
      for (const deadline = Date.now() + 30_000; (await conflicts()) - before < 3 && Date.now() < deadline; ) {
        await locker.begin((tx) => tx`lock table point in access exclusive mode`);
        await new Promise((r) => setTimeout(r, 30));
      }
      reading = false;
      await readers;
      expect((await conflicts()) - before).toBeGreaterThanOrEqual(3);
      expect([...answers.keys()]).toEqual(['200']);
    } finally {
      reading = false;
      await onStandby.unsafe('alter system reset max_standby_streaming_delay');
      await onStandby`select pg_reload_conf()`;
      await onStandby.end();
      await locker.end();
    }
  });
});
