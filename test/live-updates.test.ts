import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey } from '../src/auth/api-keys.js';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { insertApiKey, revokeApiKey } from '../src/db/api-key-queries.js';
import { openPostgres } from '../src/db/open-postgres.js';
import { upsertPoints } from '../src/db/write-points.js';
import { importFile } from '../src/import/import-files.js';
import { until } from './support/poll.js';
import { npm, npmStart, type StartedServer } from './support/processes.js';
import { startTestService, TEST_KEY, TEST_LAST_DAY, type TestService } from './support/service.js';
import { subscribeSse, type SseSubscription } from './support/sse.js';
import { STORE_KINDS } from './support/stores.js';

/**
 * Live "data landed" events over real HTTP and Server-Sent Events: a write by another
 * process (PostgreSQL) or a command handed to the server (embedded store) reaches the
 * subscribers of that series, and no one else.
 */

const PRICE =
  'subscription { seriesUpdated(name: token_price_usd, projects: [ethereum]) { name project slug from to updatedAt } }';
const OTHER_METRIC = 'subscription { seriesUpdated(name: staking_apy) { name slug } }';
const OTHER_PROJECT = 'subscription { seriesUpdated(name: token_price_usd, projects: [solana]) { name slug } }';
const ROWS =
  'metric,project,date,value\ntoken-price-usd,ethereum,2026-07-01,1.5\ntoken-price-usd,ethereum,2026-07-03,2.5\n';
/** How long an event may take to arrive: a bound on one that never comes, far above its time on a loaded machine. */
const EVENT_MS = 10_000;

/**
 * Waits until the service holds `count` open subscriptions: a write must not race a subscribe, nor a count a client
 * that left.
 */
async function subscribed(service: { running: TestService['running'] }, count: number): Promise<void> {
  const { seriesUpdates } = service.running.services;
  await until(
    () => `${count} open subscriptions (${seriesUpdates.open} now)`,
    () => seriesUpdates.open === count,
  );
}

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`seriesUpdated on ${kind.name}`, { timeout: 90_000 }, () => {
    let service: TestService;
    let dir: string;

    beforeAll(async () => {
      service = await startTestService(kind, { SUBSCRIPTIONS_PER_KEY: '3' });
      dir = await mkdtemp(join(tmpdir(), 'metrics-live-'));
    });
    afterAll(async () => {
      await service?.stop();
      if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    });

    it(
      `tells the subscribers of a series ` +
        `about ${kind.name === 'postgres' ? 'an import in another process' : 'an import'}` +
        `, ` +
        `and no one else`,
      async () => {
        const subs = await Promise.all(
          [PRICE, OTHER_METRIC, OTHER_PROJECT].map((q) => subscribeSse(service.url, q, TEST_KEY)),
        );
        try {
          for (const sub of subs) {
            expect(sub.status).toBe(200);
            expect(sub.contentType).toMatch(/^text\/event-stream/);
          }
          await subscribed(service, 3);
          const file = join(dir, 'prices.csv');
          await writeFile(file, ROWS);
          if (kind.name === 'postgres') {
            const run = await npm('import', [file], { DATABASE_URL: service.databaseUrl!, LOG_LEVEL: 'warn' });
            expect(run.code, run.stderr).toBe(0);
          } else {
            const result = await importFile(service.running.services.store, CATALOG, file);
            expect(result.ok).toBe(true);
          }
          const event = await subs[0]!.next(EVENT_MS);
          expect(event).toEqual({
            data: {
              seriesUpdated: {
                name: 'token_price_usd',
                project: 'ethereum',
                slug: 'ethereum',
                from: '2026-07-01',
                to: '2026-07-03',
                updatedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/),
              },
            },
          });
          // Its time is the write's own, to the microsecond, as the changes feed gives it.
          const feed = (await (await service.get('/v1/changes?since=2000-01-01')).json()) as {
            changes: { project: string; updatedAt: string }[];
          };
          const at = (event as { data: { seriesUpdated: { updatedAt: string } } }).data.seriesUpdated.updatedAt;
          expect(feed.changes.filter((c) => c.project === 'ethereum').map((c) => c.updatedAt)).toEqual([at, at]);
          // The event names data a query now reads.
          const res = await service.get('/v1/metrics/token-price-usd?project=ethereum&start_date=2026-07-01');
          expect(await res.json()).toEqual({
            ethereum: [
              { date: '2026-07-01', value: 1.5 },
              { date: '2026-07-03', value: 2.5 },
            ],
          });
          await new Promise((r) => setTimeout(r, 300));
          expect(subs[1]!.events).toEqual([]);
          expect(subs[2]!.events).toEqual([]);
          expect(subs[0]!.events).toHaveLength(1);
        } finally {
          for (const sub of subs) sub.close();
          await subscribed(service, 0);
        }
      },
    );

    it(
      'sends one event per series and kind of write for a whole import, however ' + 'many statements wrote it',
      async () => {
        const sub = await subscribeSse(
          service.url,
          'subscription { seriesUpdated(name: token_price_usd, projects: [solana]) { slug from to } }',
          TEST_KEY,
        );
        try {
          await subscribed(service, 1);
          // 25,000 new days (the import writes 10,000 rows a statement, so three statements add
          // them) and, last, a revision of the last seeded day.
          const day = (n: number) => new Date(Date.UTC(1940, 0, 1) + n * 86_400_000).toISOString().slice(0, 10);
          const lines = Array.from({ length: 25_000 }, (_, n) => `token-price-usd,solana,${day(n)},${n + 0.5}`);
          const file = join(dir, 'many-statements.csv');
          await writeFile(
            file,
            `metric,project,date,value\n${lines.join('\n')}\ntoken-price-usd,solana,${TEST_LAST_DAY},123456.25\n`,
          );
          const result = await importFile(service.running.services.store, CATALOG, file);
          expect(result.ok && result.written).toEqual({ added: 25_000, revised: 1, removed: 0 });
          await sub.next(EVENT_MS);
          await new Promise((r) => setTimeout(r, 500));
          expect(sub.events).toEqual([
            { data: { seriesUpdated: { slug: 'solana', from: '1940-01-01', to: day(24_999) } } },
            { data: { seriesUpdated: { slug: 'solana', from: TEST_LAST_DAY, to: TEST_LAST_DAY } } },
          ]);
        } finally {
          sub.close();
          await subscribed(service, 0);
        }
      },
    );

    it('caps open subscriptions per key, frees a slot when a client leaves, and needs a key', async () => {
      // Asked for without accepting an event stream, a subscription is refused (406) after
      // its stream was made; such refusals must hold no slot, or four of them lock the key out.
      for (let i = 0; i < 4; i += 1) {
        const res = await fetch(`${service.url}/graphql`, {
          method: 'POST',
          headers: { 'x-api-key': TEST_KEY, 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({ query: PRICE }),
        });
        expect(res.status).toBe(406);
        await res.arrayBuffer();
      }
      const open = await Promise.all([PRICE, PRICE, PRICE].map((q) => subscribeSse(service.url, q, TEST_KEY)));
      await subscribed(service, 3);
      const refused = await subscribeSse(service.url, PRICE, TEST_KEY);
      await refused.ended;
      expect(refused.events).toEqual([
        {
          errors: [
            expect.objectContaining({
              message: 'this key already holds 3 open subscriptions, the most it may; close one first',
              extensions: { code: 'RATE_LIMITED' },
            }),
          ],
          extensions: { cost: { units: 1 } },
        },
      ]);
      open[0]!.close();
      await subscribed(service, 2);
      const again = await subscribeSse(service.url, PRICE, TEST_KEY);
      await subscribed(service, 3);
      for (const sub of [...open, again]) sub.close();
      await subscribed(service, 0);

      const anonymous = await subscribeSse(service.url, PRICE, null);
      expect(anonymous.status).toBe(401);
      const wrongProject = await subscribeSse(
        service.url,
        'subscription { seriesUpdated(name: staking_apy, projects: [blackrock]) { name } }',
        TEST_KEY,
      );
      await wrongProject.ended;
      expect(JSON.stringify(wrongProject.events)).toMatch(/staking-apy has no project blackrock/);
    });

    it('ends the open subscriptions of a key when it is revoked, as its requests are refused', async () => {
      const key = generateApiKey();
      const store = service.running.services.store;
      const name = `live-${kind.name}`;
      await insertApiKey(store, name, hashApiKey(key));
      const kept = await subscribeSse(service.url, PRICE, TEST_KEY);
      const sub = await subscribeSse(service.url, PRICE, key);
      try {
        expect(sub.status).toBe(200);
        await subscribed(service, 2);
        // What `npm run keys -- revoke` does in the server holding the store (on a PostgreSQL
        // server, other instances' caches let it go within KEY_CACHE_MS).
        await revokeApiKey(store, name);
        service.running.services.keys.forget();
        expect((await service.get('/v1/metrics', { key })).status).toBe(401);
        const ended = await Promise.race([
          sub.ended.then(() => true),
          new Promise((r) => setTimeout(() => r(false), EVENT_MS)),
        ]);
        expect(ended).toBe(true);
        await subscribed(service, 1);
        // A write afterwards reaches the other key's subscription, not the revoked one's.
        const projectId = service.running.services.state.directory!.idOf('token-price-usd', 'ethereum')!;
        await upsertPoints(store, [{ projectId, day: '2026-07-20', value: 7, extra: null }]);
        expect(await kept.next(EVENT_MS)).toMatchObject({
          data: { seriesUpdated: { slug: 'ethereum', from: '2026-07-20' } },
        });
        expect(sub.events).toEqual([]);
      } finally {
        sub.close();
        kept.close();
        await subscribed(service, 0);
      }
    });
  });
}

describe.skipIf(!STORE_KINDS[1]!.available)(
  'seriesUpdated across two instances on one PostgreSQL',
  { timeout: 60_000 },
  () => {
    it('tells a subscriber on instance B of a write made through instance A', async () => {
      const a = await startTestService(STORE_KINDS[1]!);
      const second = openPostgres({
        url: a.databaseUrl!,
        poolSize: 2,
        statementTimeoutSeconds: 5,
        connectTimeoutSeconds: 5,
      });
      const b = await startTestService(
        STORE_KINDS[1]!,
        {},
        { store: { store: second, url: a.databaseUrl!, dispose: () => second.close() } },
      );
      try {
        const sub = await subscribeSse(b.url, PRICE, TEST_KEY);
        await subscribed(b, 1);
        const projectId = a.running.services.state.directory!.idOf('token-price-usd', 'ethereum')!;
        await upsertPoints(a.running.services.store, [{ projectId, day: '2026-07-09', value: 9, extra: null }]);
        expect(await sub.next(EVENT_MS)).toMatchObject({
          data: { seriesUpdated: { name: 'token_price_usd', slug: 'ethereum', from: '2026-07-09', to: '2026-07-09' } },
        });
        sub.close();
      } finally {
        await b.stop();
        await a.stop();
      }
    });
  },
);

describe('seriesUpdated on the embedded store with npm start', { timeout: 120_000 }, () => {
  let dir: string;
  let server: StartedServer;
  let key: string;
  let sub: SseSubscription | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'metrics-live-embedded-'));
    // A grace period far longer than a stop takes, so one that waited for the subscription shows;
    // /metrics tells when the subscription is open.
    const env = { PGLITE_DIR: join(dir, 'pglite'), LOG_LEVEL: 'info', SHUTDOWN_GRACE_SECONDS: '60', METRICS: 'public' };
    server = await npmStart(env);
    key = /Created API key "local" \(shown once, keep it\): (mk_[\w-]+)/.exec(server.stderr())?.[1] ?? '';
  }, 120_000);
  afterAll(async () => {
    sub?.close();
    await server?.stop('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  it('tells a subscriber of an `npm run import` handed to the server, and ends the stream on Ctrl-C', async () => {
    sub = await subscribeSse(server.url, PRICE, key);
    expect(sub.status).toBe(200);
    const open = async () =>
      (await (await fetch(`${server.url}/metrics`)).text()).match(/^metrics_live_subscriptions (\d+)$/m)?.[1];
    await until('the subscription open', async () => (await open()) === '1');
    const file = join(dir, 'prices.csv');
    await writeFile(file, ROWS);
    const run = await npm('import', [file], { PGLITE_DIR: join(dir, 'pglite') });
    expect(run.code, run.stderr).toBe(0);
    const event = await sub.next(EVENT_MS);
    expect((event as { data: { seriesUpdated: unknown } }).data.seriesUpdated).toMatchObject({
      name: 'token_price_usd',
      slug: 'ethereum',
      from: '2026-07-01',
      to: '2026-07-03',
    });
    // A graceful stop does not wait for the open subscription: the stream ends and the server
    // exits well within the grace period it would otherwise wait out.
    const stopping = Date.now();
    await server.stop('SIGINT');
    await sub.ended;
    expect(Date.now() - stopping).toBeLessThan(30_000);
  });
});
