import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { loadConfig } from '../src/config.js';
import { migrate } from '../src/db/migrate.js';
import { openPostgres } from '../src/db/open-postgres.js';
import { createLogger } from '../src/log.js';
import { seedDatabase } from '../src/seed/seed-database.js';
import { startService, type RunningService } from '../src/start/start-service.js';
import {
  createPrivatePostgres,
  createSeverableProxy,
  POSTGRES_BIN,
  type PrivatePostgres,
} from './support/private-postgres.js';
import { prerequisite } from './support/ci.js';
import { projectId } from './support/project-id.js';
import { createScratchDatabase, TEST_DATABASE_URL } from './support/stores.js';
import { npmStart } from './support/processes.js';
import { until } from './support/poll.js';
import { Writable } from 'node:stream';

const KEY = 'fault-test-key-0123456789';
const DATA_PATH = '/v1/metrics/price?project=ethereum,solana&start_date=2026-01-01&end_date=2026-03-31';
const GRAPHQL_BODY = JSON.stringify({
  query: '{ metric(name: price, projects: [ethereum]) { series { points { date } } } }',
});
const available =
  TEST_DATABASE_URL !== undefined &&
  prerequisite(
    POSTGRES_BIN !== undefined,
    'PostgreSQL server binaries (initdb, pg_ctl)',
    'install them with apt-get install postgresql',
  );

/** A database server of our own that the tests stop, kill and lock, seeded with one year of data. */
async function seededCluster(): Promise<PrivatePostgres> {
  const pg = await createPrivatePostgres();
  const store = openPostgres({ url: pg.url, poolSize: 2, statementTimeoutSeconds: 60, connectTimeoutSeconds: 5 });
  await migrate(store);
  await seedDatabase(store, CATALOG, { years: 1, lastDay: Date.parse('2026-06-30T00:00:00Z') / 86_400_000 });
  await store.close();
  return pg;
}

async function startOn(
  url: string,
  env: Record<string, string> = {},
): Promise<{ service: RunningService; logs: string[] }> {
  const logs: string[] = [];
  const sink = new Writable({ write: (chunk, _e, done) => (logs.push(String(chunk)), done()) });
  const config = loadConfig({
    DATABASE_URL: url,
    PORT: '0',
    API_KEYS: KEY,
    CONNECT_TIMEOUT_SECONDS: '2',
    STATEMENT_TIMEOUT_SECONDS: '2',
    RATE_LIMIT_PER_MINUTE: '0',
    ...env,
  });
  return { service: await startService(config, createLogger(config, sink)), logs };
}

const get = (base: string, path: string, init: RequestInit = {}) =>
  fetch(`${base}${path}`, {
    ...init,
    headers: { 'x-api-key': KEY, ...init.headers },
    signal: init.signal ?? AbortSignal.timeout(15_000),
  });
const graphql = (base: string) =>
  get(base, '/graphql', { method: 'POST', body: GRAPHQL_BODY, headers: { 'content-type': 'application/json' } });

/** A GraphQL answer for a database that is away: 503, a retry hint, one SERVICE_UNAVAILABLE error and no data. */
async function expectGraphqlUnavailable(res: Response): Promise<void> {
  expect(res.status).toBe(503);
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(res.headers.get('retry-after')).toBe('5');
  const body = (await res.json()) as {
    data?: Record<string, unknown> | null;
    errors: { message: string; extensions: { code: string } }[];
  };
  // no data: nothing at all, or the nullable field null
  expect(body.data ?? { metric: null }).toEqual({ metric: null });
  expect(body.errors).toHaveLength(1);
  expect(body.errors[0]!.extensions.code).toBe('SERVICE_UNAVAILABLE');
  expect(body.errors[0]!.message).toMatch(/retry shortly/);
}

/** Sends requests back to back from `workers` loops until `stop` resolves; returns every status seen. */
async function traffic(base: string, workers: number, stop: Promise<unknown>): Promise<number[]> {
  const statuses: number[] = [];
  let done = false;
  void stop.then(() => (done = true));
  await Promise.all(
    Array.from({ length: workers }, async (_, i) => {
      while (!done) {
        const res = await (i % 2 === 0 ? get(base, DATA_PATH) : graphql(base));
        await res.arrayBuffer();
        statuses.push(res.status);
      }
    }),
  );
  return statuses;
}

/** Polls until a data request answers 200; returns how long that took. */
async function timeUntilServing(base: string, limitMs = 30_000): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < limitMs) {
    const res = await get(base, DATA_PATH);
    await res.arrayBuffer();
    if (res.status === 200) return Date.now() - started;
    await sleep(100);
  }
  throw new Error(`not serving again after ${limitMs} ms`);
}

describe.skipIf(!available)('database faults on a private PostgreSQL', () => {
  let pg: PrivatePostgres;
  beforeAll(async () => {
    pg = await seededCluster();
  }, 120_000);
  afterAll(async () => pg?.destroy());

  it('starts with the database down, answers 503 quickly, and serves once it comes back', async () => {
    await pg.stop();
    const { service, logs } = await startOn(pg.url);
    try {
      expect((await get(service.url, '/healthz')).status).toBe(200);
      expect((await get(service.url, '/readyz')).status).toBe(503);
      // The retry says why, as describeError puts it (it said "[object Object]", described twice).
      // The first retry's line is written once the first attempt has failed, which may be after /readyz answers.
      const retry = await until('the first retry logged', () =>
        logs
          .map((l) => JSON.parse(l) as { msg: string; err?: unknown })
          .find((l) => l.msg === 'database not ready; retrying'),
      );
      expect(retry?.err).toMatchObject({
        type: 'Error',
        code: 'ECONNREFUSED',
        message: expect.stringContaining('ECONNREFUSED'),
      });
      const started = Date.now();
      const res = await get(service.url, DATA_PATH);
      expect(Date.now() - started).toBeLessThan(6_000);
      expect(res.status).toBe(503);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(res.headers.get('retry-after')).toBe('5');
      const problem = (await res.json()) as { status: number; type: string; detail: string };
      expect(problem).toMatchObject({ status: 503, type: '/docs#problem-unavailable' });
      expect(problem.detail).toMatch(/not ready yet/);
      const gql = await graphql(service.url);
      await expectGraphqlUnavailable(gql);
      // A stored key cannot be checked while the database is away: 503, not 401.
      const unknownKey = await fetch(`${service.url}/graphql`, {
        method: 'POST',
        body: GRAPHQL_BODY,
        headers: { 'content-type': 'application/json', 'x-api-key': 'mk_a-key-that-would-be-in-the-database' },
      });
      await expectGraphqlUnavailable(unknownKey);
      await pg.start();
      const recovery = await timeUntilServing(service.url);
      console.log(`faults: served again ${recovery} ms after the database came back (start-up case)`);
      expect((await get(service.url, '/readyz')).status).toBe(200);
    } finally {
      await service.close();
      await pg.start().catch(() => {});
    }
  }, 60_000);

  it('answers GraphQL with a SERVICE_UNAVAILABLE error and REST with a 503 ' +
    'problem when the database stops after start-up', async () => {
    const { service } = await startOn(pg.url);
    try {
      await service.ready;
      await pg.stop();
      await expectGraphqlUnavailable(await graphql(service.url));
      const res = await get(service.url, DATA_PATH);
      expect(res.status).toBe(503);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(res.headers.get('retry-after')).toBe('5');
      expect(((await res.json()) as { detail: string }).detail).toMatch(/database is unavailable or too slow/);
    } finally {
      await pg.start();
      await service.close();
    }
  }, 60_000);

  it('answers only 200 or 503 while its connections are killed, and recovers', async () => {
    const { service, logs } = await startOn(pg.url);
    await service.ready;
    const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
    try {
      const killing = (async () => {
        for (let i = 0; i < 10; i += 1) {
          await admin`select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'metrics-service'`;
          await sleep(150);
        }
      })();
      const statuses = await traffic(service.url, 6, killing);
      expect(statuses.length).toBeGreaterThan(20);
      const unexpected = statuses.filter((s) => s !== 200 && s !== 503);
      if (unexpected.length > 0)
        console.log(
          logs
            .filter((l) => l.includes('"level":50'))
            .slice(0, 5)
            .join(''),
        );
      expect(unexpected).toEqual([]);
      await timeUntilServing(service.url, 10_000);
      expect(logs.join('')).not.toContain(KEY);
    } finally {
      await admin.end();
      await service.close();
    }
  }, 60_000);

  it('answers only 200 or 503 while the server is stopped and started under ' +
    'traffic, and recovers by itself', async () => {
    const { service } = await startOn(pg.url);
    await service.ready;
    try {
      let restartedAt = 0;
      const outage = (async () => {
        await sleep(500);
        await pg.stop('fast');
        await sleep(2_000);
        await pg.start();
        restartedAt = Date.now();
        await sleep(500);
      })();
      const statuses = await traffic(service.url, 4, outage);
      expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);
      expect(statuses).toContain(503);
      await timeUntilServing(service.url, 15_000);
      console.log(`faults: served again ${Date.now() - restartedAt} ms after a restart under traffic`);
    } finally {
      await pg.start().catch(() => {});
      await service.close();
    }
  }, 60_000);

  it('gives up on a query blocked by a lock after the statement timeout with a 503, then serves', async () => {
    const { service } = await startOn(pg.url, { STATEMENT_TIMEOUT_SECONDS: '1' });
    await service.ready;
    const locker = postgres(pg.url, { max: 1, onnotice: () => {} });
    try {
      const release = await holdLock(locker);
      const started = Date.now();
      const res = await get(service.url, DATA_PATH);
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(Date.now() - started).toBeLessThan(3_000);
      await release();
      expect((await get(service.url, DATA_PATH)).status).toBe(200);
    } finally {
      await locker.end();
      await service.close();
    }
  }, 30_000);

  it('answers 503 within the timeouts while the server does not answer at all ' +
    '(a frozen host), then serves', async () => {
    const { service } = await startOn(pg.url, { CONNECT_TIMEOUT_SECONDS: '1', STATEMENT_TIMEOUT_SECONDS: '1' });
    await service.ready;
    let thaw: (() => Promise<void>) | undefined;
    try {
      // Connections open in the pool first: a statement sent down one waits on the frozen server.
      await Promise.all(Array.from({ length: 4 }, () => get(service.url, DATA_PATH).then((res) => res.arrayBuffer())));
      // Thawed after 8 s whatever happens: without a bound of its own, a request waits for that.
      thaw = await pg.freezeAtMost(8_000);
      const started = Date.now();
      const timed = async (res: Promise<Response>) => {
        const answer = await res;
        return { answer, seconds: (Date.now() - started) / 1000 };
      };
      const [rest, gql, ready] = await Promise.all([
        timed(get(service.url, DATA_PATH.replace('2026-01-01', '2026-01-02'))),
        timed(
          get(service.url, '/graphql', {
            method: 'POST',
            body: GRAPHQL_BODY.replace('}) {', ', from: "2026-01-02"}) {'),
            headers: { 'content-type': 'application/json' },
          }),
        ),
        timed(fetch(`${service.url}/readyz`)),
      ]);
      expect(rest.answer.status).toBe(503);
      expect(((await rest.answer.json()) as { detail: string }).detail).toMatch(/database is unavailable or too slow/);
      await expectGraphqlUnavailable(gql.answer);
      expect(ready.answer.status).toBe(503);
      for (const { seconds } of [rest, gql, ready]) expect(seconds).toBeLessThan(4);
      await thaw();
      expect(await timeUntilServing(service.url)).toBeLessThan(5_000);
    } finally {
      await thaw?.();
      await service.close();
    }
  }, 30_000);

  it('ends a streamed read whose server stops answering between batches, within ' +
    'the timeouts, and frees its connection once the server is back', async () => {
    // One connection: a cursor left waiting on it for good would leave the last query nothing to run on.
    const store = openPostgres({ url: pg.url, poolSize: 1, statementTimeoutSeconds: 1, connectTimeoutSeconds: 1 });
    let thaw: (() => Promise<void>) | undefined;
    try {
      const batches = store.streamRaw('select g from generate_series(1, 100000) g', [], 1_000)[Symbol.asyncIterator]();
      const first = await batches.next();
      expect((first.value as unknown[][]).length).toBe(1_000);
      thaw = await pg.freezeAtMost(8_000);
      const started = Date.now();
      const failure = await batches.next().then(
        () => undefined,
        (error: unknown) => error as { code?: string },
      );
      expect({ code: failure?.code, withinTimeouts: (Date.now() - started) / 1000 < 4 }).toEqual({
        code: 'ETIMEDOUT',
        withinTimeouts: true,
      });
      await thaw();
      const rows = await store.query<{ n: number }>('select 1 as n');
      expect(rows).toEqual([{ n: 1 }]);
    } finally {
      await thaw?.();
      await store.close();
    }
  }, 30_000);

  it('stops answering from its response cache when the database is cut off ' +
    'without a word, rather than serve old data', async () => {
    // The service reaches the database through a proxy that a test can sever, as a network
    // partition does: nothing is closed, nothing gets through. A write made meanwhile by
    // another writer is never announced to it.
    const proxy = await createSeverableProxy(pg.port);
    const { service } = await startOn(pg.url.replace(`:${pg.port}/`, `:${proxy.port}/`), {
      CONNECT_TIMEOUT_SECONDS: '1',
      STATEMENT_TIMEOUT_SECONDS: '1',
    });
    const writer = postgres(pg.url, { max: 1, onnotice: () => {} });
    const path = DATA_PATH.replace('2026-01-01', '2026-01-15');
    try {
      await service.ready;
      const before = await (await get(service.url, path)).text();
      expect(await (await get(service.url, path)).text()).toBe(before); // kept
      const ethereum = await projectId(service.services.store, 'price', 'ethereum');
      proxy.sever(true);
      await writer`update point set value = value + 1000 where day = '2026-01-20' and project_id = ${ethereum}`;
      await sleep(5_000);
      const cutOff = await get(service.url, path);
      const body = await cutOff.text();
      expect({ status: cutOff.status, old: body === before }).toEqual({ status: 503, old: false });
      proxy.sever(false);
      await timeUntilServing(service.url);
      expect(await (await get(service.url, path)).text()).not.toBe(before);
    } finally {
      proxy.sever(false);
      await writer.end();
      await service.close();
      await proxy.close();
    }
  }, 30_000);

  it('cancels the query of a client that aborts its request: REST, GraphQL and an export', async () => {
    const { service } = await startOn(pg.url, { STATEMENT_TIMEOUT_SECONDS: '30' });
    await service.ready;
    const locker = postgres(pg.url, { max: 1, onnotice: () => {} });
    const watcher = postgres(pg.url, { max: 1, onnotice: () => {} });
    const waiting = async () =>
      (
        await watcher`select count(*)::int as n from pg_stat_activity where application_name = 'metrics-service' and state = 'active' and wait_event_type = 'Lock'`
      )[0]!.n as number;
    try {
      const release = await holdLock(locker);
      const exportAll = () =>
        get(service.url, '/v1/export?metric=price,token-price-usd&project=ethereum&format=ndjson', {
          signal: controller(),
        });
      for (const request of [
        () => get(service.url, DATA_PATH, { signal: controller() }),
        () => graphqlAborted(service.url),
        exportAll,
      ]) {
        const pending = request().catch((e: Error) => e);
        await until('one statement waiting for the lock', async () => (await waiting()) === 1, { withinMs: 5_000 });
        abortAll();
        await pending;
        await until('no statement left waiting', async () => (await waiting()) === 0, { withinMs: 3_000 });
      }
      await release();
    } finally {
      await Promise.all([locker.end(), watcher.end()]);
      await service.close();
    }
  }, 30_000);
});

describe.skipIf(!available)('graceful shutdown on SIGTERM', () => {
  let pg: PrivatePostgres;
  beforeAll(async () => {
    pg = await seededCluster();
  }, 120_000);
  afterAll(async () => pg?.destroy());

  it('turns readiness to 503, refuses new requests, finishes the one in flight and exits 0', async () => {
    const child = spawn(process.execPath, ['scripts/run.mjs', 'src/main.ts'], {
      env: {
        ...process.env,
        DATABASE_URL: pg.url,
        PORT: '0',
        API_KEYS: KEY,
        LOG_LEVEL: 'info',
        RATE_LIMIT_PER_MINUTE: '0',
        STATEMENT_TIMEOUT_SECONDS: '30',
        SHUTDOWN_GRACE_SECONDS: '20',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += String(chunk)));
    const base = await readyUrl(child);
    const locker = postgres(pg.url, { max: 1, onnotice: () => {} });
    try {
      const release = await holdLock(locker);
      const inFlight = get(base, DATA_PATH);
      await sleep(300);
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      await sleep(300);
      expect((await fetch(`${base}/readyz`)).status).toBe(503);
      const refused = await get(base, DATA_PATH);
      expect(refused.status).toBe(503);
      expect(refused.headers.get('connection')).toBe('close');
      expect(((await refused.json()) as { detail: string }).detail).toContain('shutting down');
      await release();
      const answer = await inFlight;
      expect(answer.status).toBe(200);
      expect(Object.keys((await answer.json()) as object)).toEqual(['ethereum', 'solana']);
      expect(await exited).toBe(0);
      await expect(fetch(`${base}/healthz`)).rejects.toThrow();
      // The last lines were buffered when the process exited; they reach standard output all the same.
      const messages = stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { msg: string }).msg);
      expect(messages.at(-1)).toBe('stopped');
      expect(messages).toContain('shutting down');
    } finally {
      child.kill('SIGKILL');
      await locker.end();
    }
  }, 60_000);
});

describe.skipIf(!available)('WORKERS=2 whose workers cannot start', () => {
  it('exits 1 with the reason, as one server does, instead of starting workers for ever', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', () => resolve()));
    const { port } = taken.address() as AddressInfo;
    // Its own process group: before the fix the primary outlived any kill of npm's.
    const child = spawn(process.execPath, ['scripts/run.mjs', 'src/main.ts'], {
      env: {
        ...process.env,
        DATABASE_URL: TEST_DATABASE_URL!,
        PORT: String(port),
        WORKERS: '2',
        API_KEYS: KEY,
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += String(chunk)));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const code = await Promise.race([exited, sleep(20_000).then(() => 'still running')]);
      expect(code, stderr).toBe(1);
      expect(stderr).toContain('EADDRINUSE');
      expect(stderr).not.toContain('starting another');
    } finally {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // the group has ended
      }
      taken.close();
    }
  }, 60_000);
});

describe.skipIf(!available)('Ctrl-C at a terminal with WORKERS=2', () => {
  it("stops each worker once, though it hears both the terminal's SIGINT and its primary's SIGTERM", async () => {
    const database = await createScratchDatabase(TEST_DATABASE_URL!);
    try {
      const server = await npmStart(
        { DATABASE_URL: database.url, WORKERS: '2', API_KEYS: KEY, LOG_LEVEL: 'info' },
        90_000,
      );
      await server.stop('SIGINT');
      const messages = server.logLines().map((l) => l.msg);
      expect(messages.filter((m) => m === 'shutting down')).toHaveLength(2);
      expect(messages.filter((m) => m === 'stopped')).toHaveLength(2);
    } finally {
      await database.drop();
    }
  }, 120_000);
});

describe.skipIf(!available)('a server whose standard output goes away', () => {
  let pg: PrivatePostgres;
  beforeAll(async () => {
    pg = await seededCluster();
  }, 120_000);
  afterAll(async () => pg?.destroy());

  it('stops, as on SIGTERM, instead of living on unheard', async () => {
    const child = spawn(process.execPath, ['scripts/run.mjs', 'src/main.ts'], {
      env: { ...process.env, DATABASE_URL: pg.url, PORT: '0', API_KEYS: KEY, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const base = await readyUrl(child);
      child.stdout!.destroy(); // the reader of the pipe (a `| head`, a closed terminal) is gone
      const started = Date.now();
      // Each request writes a log line; the next flush finds the pipe closed.
      while (child.exitCode === null && Date.now() - started < 10_000) {
        await fetch(`${base}/healthz`)
          .then((r) => r.arrayBuffer())
          .catch(() => {});
        await sleep(100);
      }
      expect(await exited).toBe(0);
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      child.kill('SIGKILL');
    }
  }, 60_000);

  it('writes to a piped standard output that stays blocking, and every request line arrives', async () => {
    const child = spawn(process.execPath, ['scripts/run.mjs', 'src/main.ts'], {
      env: { ...process.env, DATABASE_URL: pg.url, PORT: '0', API_KEYS: KEY, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    let stdout = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += String(chunk)));
    try {
      const base = await readyUrl(child);
      // Log blocks are written on the main thread: a pipe switched to non-blocking mode
      // (as making process.stdout does) would refuse them with EAGAIN once full.
      const flags = Number.parseInt(
        /^flags:\s+(\d+)$/m.exec(readFileSync(`/proc/${child.pid}/fdinfo/1`, 'utf8'))![1]!,
        8,
      );
      expect(flags & 0o4000).toBe(0);
      const requests = 300;
      for (let i = 0; i < requests; i += 1) await fetch(`${base}/healthz`).then((r) => r.arrayBuffer());
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      const lines = stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { msg: string; route?: string });
      expect(lines.filter((l) => l.msg === 'request' && l.route === '/healthz')).toHaveLength(requests);
      expect(lines.at(-1)!.msg).toBe('stopped');
    } finally {
      child.kill('SIGKILL');
    }
  }, 60_000);
});

/** The base URL a spawned service prints on standard error when it is ready; refused if it exits first. */
function readyUrl(child: ChildProcess): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let text = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      text += String(chunk);
      const url = /ready at (http:\/\/[\d.]+:\d+)/.exec(text)?.[1];
      if (url !== undefined) resolve(url);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${text}`)));
  });
}

// Private

let controllers: AbortController[] = [];
function controller(): AbortSignal {
  const c = new AbortController();
  controllers.push(c);
  return c.signal;
}
function abortAll(): void {
  for (const c of controllers) c.abort();
  controllers = [];
}
function graphqlAborted(base: string): Promise<Response> {
  return get(base, '/graphql', {
    method: 'POST',
    body: GRAPHQL_BODY,
    headers: { 'content-type': 'application/json' },
    signal: controller(),
  });
}

/** Holds an exclusive lock on `point` in an open transaction until the returned function is called. */
async function holdLock(sql: postgres.Sql): Promise<() => Promise<void>> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  const transaction = sql.begin(async (tx) => {
    await tx`lock table point in access exclusive mode`;
    locked();
    await released;
  });
  await isLocked;
  return async () => {
    release();
    await transaction;
  };
}
