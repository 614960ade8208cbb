import { loadConfig } from '../../src/config.js';
import { CATALOG } from '../../src/catalog/load-catalog.js';
import { migrate } from '../../src/db/migrate.js';
import { createLogger } from '../../src/log.js';
import { seedDatabase } from '../../src/seed/seed-database.js';
import { startService, type RunningService } from '../../src/start/start-service.js';
import { requestInProcess } from './in-process.js';
import { until } from './poll.js';
import type { Store } from '../../src/db/store.js';
import type { StoreKind, StoreUnderTest } from './stores.js';
import { Writable } from 'node:stream';

/** The plain key every test service accepts (through `API_KEYS`). */
export const TEST_KEY = 'test-key-0123456789abcdef';

/** The fixed last day of test data, so expectations do not move with the calendar. */
export const TEST_LAST_DAY = '2026-06-30';

/**
 * The service's clock in tests: noon of {@link TEST_LAST_DAY} when the service starts, then
 * running with real time, so no request's meaning (its cost, an open range) depends on today.
 */
export function testClock(): () => Date {
  const started = Date.now();
  const noon = Date.parse(`${TEST_LAST_DAY}T12:00:00Z`);
  return () => new Date(noon + (Date.now() - started));
}

export interface TestService {
  running: RunningService;
  url: string;
  /** The PostgreSQL server database's URL, for a second process to write to; undefined on the embedded store. */
  databaseUrl: string | undefined;
  /** Every log line the service wrote, parsed. */
  logs: Record<string, unknown>[];
  /** Raw log text, for "never contains" checks. */
  logText(): string;
  /** A request to the app in-process, with the test key unless `key` says otherwise (null: no header). */
  get(path: string, init?: RequestInit & { key?: string | null }): Promise<Response>;
  /** The same over a real socket, for what only a socket shows (streaming, a client that leaves). */
  fetch(path: string, init?: RequestInit & { key?: string | null }): Promise<Response>;
  /** A GraphQL POST in-process, accepting application/graphql-response+json. */
  graphql(query: string, variables?: Record<string, unknown>, key?: string | null): Promise<Response>;
  stop(): Promise<void>;
}

/**
 * Runs `write` and resolves once the service has heard PostgreSQL announce it: answers
 * kept by the response cache are dropped then, not at the commit itself.
 */
export async function heard<T>(service: TestService, write: () => Promise<T>): Promise<T> {
  const updates = service.running.services.seriesUpdates;
  const before = updates.heard;
  const result = await write();
  await until("the write's announcement", () => updates.heard !== before, { everyMs: 5 });
  return result;
}

export interface TestServiceOptions {
  /** Wraps the seeded store before the service gets it, so a test can count or fail its statements. */
  wrapStore?: (store: Store) => Store;
  /** A store the test prepared itself (then not seeded), instead of a new seeded one of `kind`. */
  store?: StoreUnderTest;
  /** The service's clock, instead of {@link testClock}'s. */
  clock?: () => Date;
}

/**
 * Starts the real server on a free port over a store of `kind`, seeded with one year of
 * sample data ending on {@link TEST_LAST_DAY}.
 */
export async function startTestService(
  kind: StoreKind,
  env: Record<string, string> = {},
  options: TestServiceOptions = {},
): Promise<TestService> {
  const { store, dispose, url: databaseUrl } = options.store ?? (await kind.open());
  await migrate(store);
  if (options.store === undefined)
    await seedDatabase(store, CATALOG, { years: 1, lastDay: Date.parse(`${TEST_LAST_DAY}T00:00:00Z`) / 86_400_000 });
  await store.exec('analyze');
  // Suites send many requests with the one test key: no rate limit unless a test asks for one.
  const config = loadConfig({ PORT: '0', API_KEYS: TEST_KEY, LOG_LEVEL: 'info', RATE_LIMIT_PER_MINUTE: '0', ...env });
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const running = await startService(config, createLogger(config, sink), {
    store: options.wrapStore?.(store) ?? store,
    clock: options.clock ?? testClock(),
  });
  await running.ready;
  const withKey = (init: RequestInit & { key?: string | null } = {}): RequestInit => {
    const { key = TEST_KEY, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (key !== null) headers.set('x-api-key', key);
    return { ...rest, headers };
  };
  return {
    running,
    url: running.url,
    databaseUrl,
    get logs() {
      return lines.flatMap((l) => l.trim().split('\n')).map((l) => JSON.parse(l) as Record<string, unknown>);
    },
    logText: () => lines.join(''),
    get: (path, init) => requestInProcess(running.app, path, withKey(init)),
    fetch: (path, init) => fetch(`${running.url}${path}`, withKey(init)),
    graphql: (query, variables, key) =>
      requestInProcess(
        running.app,
        '/graphql',
        withKey({
          method: 'POST',
          key,
          headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
          body: JSON.stringify({ query, variables }),
        }),
      ),
    stop: async () => {
      await running.close();
      await dispose().catch(() => {});
    },
  };
}
