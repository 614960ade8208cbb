import { createServer, request } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { streamBody } from '../src/http/send-json.js';
import { openPostgres } from '../src/db/open-postgres.js';
import { ClientGone } from '../src/http/client-gone.js';
import { CancelledError } from '../src/db/store.js';
import { GRAPHQL_ANSWER_BUDGET_BYTES } from '../src/limits/answer-budget.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { migrate } from '../src/db/migrate.js';
import { seedDatabase } from '../src/seed/seed-database.js';
import { until } from './support/poll.js';
import { startTestService, TEST_KEY, TEST_LAST_DAY, type TestService } from './support/service.js';
import { STORE_KINDS, type StoreUnderTest } from './support/stores.js';

const postgres = STORE_KINDS[1]!;

// Three years of all 76 projects: more points than one batch, so the answer streams
// through a cursor, several projects per round trip.
const STREAMED = `/v1/metrics/etf-aum-change-pct?start_date=2023-07-01&end_date=${TEST_LAST_DAY}`;
const SMALL = '/v1/metrics/token-price-usd?project=ethereum,solana&start_date=2026-01-01&end_date=2026-03-31';

/** Starts a streamed answer and hangs up as soon as its first bytes arrive. */
function leaveAfterFirstBytes(url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${STREAMED}`, { headers: { 'x-api-key': TEST_KEY } }, (res) => {
      res.once('data', () => {
        req.destroy();
        resolve();
      });
      res.once('end', () => reject(new Error('the whole answer came before the client could leave')));
    });
    req.on('error', () => resolve());
    req.end();
  });
}

/** Asks for a streamed answer and hangs up after `ms`, before any of it could come. */
function leaveAfter(url: string, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const req = request(`${url}${STREAMED}`, { headers: { 'x-api-key': TEST_KEY } });
    req.on('error', () => resolve());
    req.end();
    setTimeout(() => {
      req.destroy();
      resolve();
    }, ms);
  });
}

describe.skipIf(!postgres.available)('clients that leave in the middle of a streamed answer', () => {
  let service: TestService;
  let store: StoreUnderTest;
  beforeAll(async () => {
    store = await postgres.open();
    await migrate(store.store);
    await seedDatabase(store.store, CATALOG, {
      years: 3,
      lastDay: Date.parse(`${TEST_LAST_DAY}T00:00:00Z`) / 86_400_000,
    });
    // No response cache: every request must reach the database.
    service = await startTestService(postgres, { RESPONSE_CACHE_MB: '0' }, { store });
  }, 120_000);
  afterAll(async () => service?.stop());

  it('cost the requests after them nothing: no statement of another request ' +
    'is cancelled, no connection is kept', async () => {
    const expected = await (await service.fetch(SMALL)).text();
    expect(Object.keys(JSON.parse(expected) as object)).toEqual(['ethereum', 'solana']);
    const statuses: number[] = [];
    let wrong = 0;
    for (let round = 0; round < 25; round += 1) {
      // Two leave while small requests run beside them on the same few connections (pool of 4).
      const small = Array.from({ length: 4 }, async () => {
        const res = await service.fetch(SMALL);
        statuses.push(res.status);
        if ((await res.text()) !== expected) wrong += 1;
      });
      await Promise.all([leaveAfterFirstBytes(service.url), leaveAfterFirstBytes(service.url), ...small]);
    }
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    expect(wrong).toBe(0);

    // Many more leave while their statements still wait for one of the 4 connections: each
    // answer then starts after its client is gone, and must not keep its connection.
    await Promise.all(Array.from({ length: 24 }, (_, i) => leaveAfter(service.url, 1 + (i % 8))));

    // Every connection came back: a full streamed answer still completes, with every project.
    const whole = await service.fetch(STREAMED, { signal: AbortSignal.timeout(20_000) });
    expect(whole.status).toBe(200);
    const body = (await whole.json()) as Record<string, { date: string }[]>;
    const stored = await store.store.query<{ projects: number; points: number }>(
      `select count(distinct p.id)::integer as projects, count(*)::integer as ` +
        `points from point pt join project p on p.id = pt.project_id
       join metric m on m.id = p.metric_id where m.name = 'etf-aum-change-pct' ` +
        `and pt.day between '2023-07-01' and $1`,
      [TEST_LAST_DAY],
    );
    expect(Object.keys(body)).toHaveLength(stored[0]!.projects);
    expect(Object.values(body).reduce((n, points) => n + points.length, 0)).toBe(stored[0]!.points);
    expect(service.logText()).not.toMatch(/canceling statement/);
  }, 120_000);
});

describe('a client that stops reading a streamed answer', () => {
  it('is given up after the stall limit, and its source is closed', async () => {
    let produced = 0;
    let closed = false;
    async function* endless() {
      try {
        for (;;) {
          produced += 1;
          yield Buffer.alloc(1024 * 1024, 120);
        }
      } finally {
        closed = true;
      }
    }
    const server = createServer((req, res) => void streamBody(req, res, 'text/plain', endless(), 300));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
    try {
      // Asks, then reads nothing: the socket's buffers fill and the server waits for a drain.
      socket.pause();
      socket.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n');
      const started = Date.now();
      while (!closed && Date.now() - started < 10_000) await new Promise((resolve) => setTimeout(resolve, 50));
      expect({ closed, withinSeconds: (Date.now() - started) / 1000 < 5 }).toEqual({
        closed: true,
        withinSeconds: true,
      });
      expect(produced).toBeLessThan(200); // it stopped producing: far less than 10 s of a local socket
    } finally {
      socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe.skipIf(!postgres.available)('a cancel that lands on the wrong statement', () => {
  let db: StoreUnderTest;
  beforeAll(async () => {
    db = await postgres.open();
  });
  afterAll(async () => db?.dispose());

  /** Cancels, as a stray cancel request would, the statement running `marker` (a pg_sleep of its own length). */
  const cancelWhileRunning = async (marker: string) => {
    for (let i = 0; i < 200; i += 1) {
      const rows = await db.store.query<{ cancelled: boolean }>(
        `select pg_cancel_backend(pid) as cancelled from pg_stat_activity where ` +
          `state = 'active' and query like $1 and pid <> pg_backend_pid()`,
        [`%${marker}%`],
      );
      if (rows.some((r) => r.cancelled)) return;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`no statement with ${marker} ran`);
  };

  it('runs a statement whose client is still there once more, and gives its rows', async () => {
    const started = Date.now();
    const victim = db.store.query<{ x: number }>('select pg_sleep(0.301), 7 as x');
    await cancelWhileRunning('pg_sleep(0.301)');
    expect(await victim).toEqual([{ pg_sleep: '', x: 7 }]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300); // the second run slept again
    const raw = db.store.queryRaw('select pg_sleep(0.302), 8 as x', []);
    await cancelWhileRunning('pg_sleep(0.302)');
    expect((await raw).map((row) => String(row[1]))).toEqual(['8']);
  });

  it('streams every row to a reader slower in all than the statement timeout, each batch within it', async () => {
    const slow = openPostgres({ url: db.url!, poolSize: 1, statementTimeoutSeconds: 1, connectTimeoutSeconds: 5 });
    try {
      let rows = 0;
      let batches = 0;
      const started = Date.now();
      for await (const batch of slow.streamRaw('select g from generate_series(1, 100000) g', [], 20_000)) {
        rows += batch.length;
        batches += 1;
        await new Promise((resolve) => setTimeout(resolve, 600));
      }
      expect({ rows, batches, slowerThanTheTimeout: Date.now() - started > 1_000 }).toEqual({
        rows: 100_000,
        batches: 5,
        slowerThanTheTimeout: true,
      });
      // The connection came back: the one-connection pool answers at once.
      expect(await slow.query<{ n: number }>('select 1 as n')).toEqual([{ n: 1 }]);
    } finally {
      await slow.close();
    }
  });

  it(
    'gives every row of a statement that follows, on the same connection, ' +
      'one that failed part-way through its rows',
    async () => {
      const one = openPostgres({ url: db.url!, poolSize: 1, statementTimeoutSeconds: 5, connectTimeoutSeconds: 5 });
      try {
        // Three rows, then a division by zero; the next statement waits behind it on the one connection.
        const failing = one.query('select i, 1 / (4 - i) as boom from generate_series(1, 10) i').catch((e: Error) => e);
        const next = one.query<{ x: number }>('select x from generate_series(1, 5) x');
        const raw = one.queryRaw('select x from generate_series(1, 5) x', []);
        const failingRaw = one
          .queryRaw('select i, 1 / (4 - i) as boom from generate_series(1, 10) i', [])
          .catch((e: Error) => e);
        const streamed = (async () => {
          const batches: string[][] = [];
          for await (const rows of one.streamRaw('select x from generate_series(1, 5) x', [], 2))
            batches.push(rows.map((row) => String(row[0])));
          return batches;
        })();
        expect(await failing).toMatchObject({ code: '22012' });
        expect(await next).toEqual([1, 2, 3, 4, 5].map((x) => ({ x })));
        expect((await raw).map((row) => String(row[0]))).toEqual(['1', '2', '3', '4', '5']);
        expect(await failingRaw).toMatchObject({ code: '22012' });
        expect(await streamed).toEqual([['1', '2'], ['3', '4'], ['5']]);
      } finally {
        await one.close();
      }
    },
  );

  it('does not run it again when its own client left, nor inside a transaction', async () => {
    const gone = new ClientGone();
    const abandoned = db.store.query('select pg_sleep(0.303)', [], gone).catch((e: Error) => e);
    gone.abort();
    await cancelWhileRunning('pg_sleep(0.303)');
    expect(await abandoned).toMatchObject({ code: '57014' });
    const inTransaction = db.store.transaction((tx) => tx.query('select pg_sleep(0.304)')).catch((e: Error) => e);
    await cancelWhileRunning('pg_sleep(0.304)');
    expect(await inTransaction).toMatchObject({ code: '57014' });
  });
});

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`work queued for a client that has left (${kind.name})`, () => {
    it('is not sent to the store: a statement whose caller left before it was sent never runs', async () => {
      const { store, dispose } = await kind.open();
      try {
        await store.exec('create sequence left_probe');
        const gone = new ClientGone();
        gone.abort();
        const nextval = "select nextval('left_probe') as n";
        await expect(store.query(nextval, [], gone)).rejects.toBeInstanceOf(CancelledError);
        await expect(store.queryRaw(nextval, [], gone)).rejects.toBeInstanceOf(CancelledError);
        for (const batchRows of [2, Infinity]) {
          const streamed = (async () => {
            for await (const _ of store.streamRaw(nextval, [], batchRows, gone));
          })();
          await expect(streamed).rejects.toBeInstanceOf(CancelledError);
        }
        // Not one of them ran: the sequence was never advanced.
        expect(await store.query<{ is_called: boolean }>('select is_called from left_probe')).toEqual([
          { is_called: false },
        ]);
        expect(await store.query<{ n: string }>(nextval, [], new ClientGone())).toEqual([
          { n: kind.name === 'pglite' ? 1 : '1' },
        ]);
      } finally {
        await dispose();
      }
    });

    it('GraphQL answers waiting for the answer budget leave the queue with their ' +
      'clients: nothing is read for them', async () => {
      let pointReads = 0;
      const service = await startTestService(
        kind,
        { RESPONSE_CACHE_MB: '0' },
        {
          // Counts the reads of points that ran to the end, not the ones refused before they were sent.
          wrapStore: (store) => ({
            ...store,
            queryRaw: async (text, params, signal) => {
              const rows = await store.queryRaw(text, params, signal);
              if (/\bpoint\b/.test(text)) pointReads += 1;
              return rows;
            },
          }),
        },
      );
      try {
        const budget = service.running.services.answerBudget;
        // Every project for a year: about 1.1 MB by the estimate, so the answer reserves.
        const query =
          '{ metric(name: etf_aum_change_pct, from: "2025-07-01", to: "2026-06-30") ' +
          '{ series { slug points { date value } } } }';
        const hold = await budget.reserve(GRAPHQL_ANSWER_BUDGET_BYTES);
        const requests = Array.from({ length: 4 }, () => postAndLeave(service.url, query));
        await until('four requests waiting for the budget', () => budget.waiting === 4, { withinMs: 30_000 });
        pointReads = 0;
        for (const leave of requests) leave();
        await until('the departed requests leaving the queue', () => budget.waiting === 0).catch(() => {});
        hold();
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(budget.waiting).toBe(0);
        expect(budget.inUse).toBe(0);
        expect(pointReads).toBe(0);
        expect(service.logText()).not.toMatch(/unexpected error|"level":50/);
        // And the budget still serves: the same query answers every project's year.
        const res = await service.graphql(query);
        expect(res.status).toBe(200);
        const body = (await res.json()) as { data: { metric: { series: { slug: string; points: unknown[] }[] } } };
        const rest = (await (
          await service.get('/v1/metrics/etf-aum-change-pct?start_date=2025-07-01&end_date=2026-06-30')
        ).json()) as Record<string, unknown[]>;
        expect(body.data.metric.series).toHaveLength(76);
        expect(Object.fromEntries(body.data.metric.series.map((s) => [s.slug, s.points.length]))).toEqual(
          Object.fromEntries(Object.entries(rest).map(([slug, points]) => [slug, points.length])),
        );
      } finally {
        await service.stop();
      }
    }, 120_000);
  });
}

/** POSTs a GraphQL query over a real socket; the function returned hangs up. */
function postAndLeave(url: string, query: string): () => void {
  const req = request(`${url}/graphql`, {
    method: 'POST',
    headers: { 'x-api-key': TEST_KEY, 'content-type': 'application/json' },
  });
  req.on('error', () => {});
  req.end(JSON.stringify({ query }));
  return () => req.destroy();
}
