import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { createApp, MAX_HEADER_BYTES, type App } from '../app.js';
import { CATALOG } from '../catalog/load-catalog.js';
import type { Config } from '../config.js';
import { claimEmbeddedStore, type StoreClaim } from '../db/embedded-lock.js';
import { openStore } from '../db/open-store.js';
import type { Store } from '../db/store.js';
import { createServices, loadRedisStoreOpener, type Services } from '../services.js';
import { startControlServer, type ControlServer } from './control-server.js';
import { prepareNewFolder } from './first-start.js';
import { prepareDatabase } from './prepare-database.js';

/** Waits between attempts to reach the database: doubling from half a second, capped at five. */
const RETRY_DELAYS_MS = [500, 1000, 2000, 4000, 5000];

export interface RunningService {
  server: Server;
  /** The app the server runs, for requests made in-process. */
  app: App;
  services: Services;
  /** Base URL the server listens on, e.g. http://127.0.0.1:4000. */
  url: string;
  /** Resolves once the database is prepared and data requests are served. */
  ready: Promise<void>;
  /**
   * Graceful stop: readiness and new requests get 503 (with `Connection: close`),
   * requests in flight finish (up to the grace period), then the listener and the store close.
   */
  close(): Promise<void>;
}

export interface StartOptions {
  /** A store opened by the caller (tests); otherwise the configured one is opened. */
  store?: Store;
  /** The current time; tests pin it. */
  clock?: () => Date;
}

/**
 * Listens at once, then prepares the database in the background, retrying with capped
 * backoff for as long as it takes: until then `/healthz` is 200, `/readyz` 503 and data
 * requests get a 503 with Retry-After.
 *
 * An embedded store folder is claimed first (one process at a time; a StoreHeldError
 * names the holder) and a loopback command port is opened, so CLI commands run while the
 * server holds the folder are handed to it instead of writing to a copy of their own.
 */
export async function startService(
  config: Config,
  logger: Logger,
  options: StartOptions = {},
): Promise<RunningService> {
  const claim = options.store === undefined ? claimFolder(config) : undefined;
  let store: Store;
  try {
    if (claim !== undefined) await prepareNewFolder(config, logger);
    store = options.store ?? (await openStore(config));
  } catch (error) {
    claim?.release();
    throw error;
  }
  logger.info({ store: store.kind }, `store: ${store.description}`);
  const services = createServices({
    config,
    catalog: CATALOG,
    store,
    logger,
    clock: options.clock,
    openRedisStore: await loadRedisStoreOpener(config),
  });
  const app = createApp(services);

  const server = createServer({ maxHeaderSize: MAX_HEADER_BYTES }, app.listener);
  server.on('clientError', app.clientError);
  server.headersTimeout = 10_000;
  server.requestTimeout = 60_000;
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;

  const stopPreparing = new AbortController();
  const ready = keepPreparing(services, stopPreparing.signal);
  ready.catch(() => {});
  let control: ControlServer | undefined;
  if (claim?.holder.secret !== undefined) {
    control = await startControlServer(services, ready, claim.holder.secret);
    claim.announce(control.port);
  }
  return {
    server,
    app,
    services,
    url: `http://${host}:${port}`,
    ready,
    close: async () => {
      services.state.stopping = true;
      stopPreparing.abort();
      // Live subscriptions end now (they would hold the grace period). Listening stops later: on
      // the embedded store its statement waits behind any transaction, a handed-over import's too.
      const unlistened = services.seriesUpdates.close();
      // Webhook attempts in flight are cut off (tried again later) and their hooks given back.
      const hooksStopped = services.hooks.close();
      // Handed-over commands (an import, say) count as in flight; those still running after
      // the grace are stopped, rolled back and told so before the store closes.
      const inFlight = () => services.state.inFlight + (control?.running ?? 0);
      await waitForInFlight(inFlight, config.shutdownGraceSeconds * 1000, logger);
      await Promise.all([
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
        control?.close(),
      ]);
      await unlistened;
      await hooksStopped;
      await services.close();
      await store.close();
      claim?.release();
    },
  };
}

// Private

/** The embedded folder for this server, unless the store is a PostgreSQL server or in memory. */
function claimFolder(config: Config): StoreClaim | undefined {
  if (config.databaseUrl !== undefined || config.pgliteDir.startsWith('memory://')) return undefined;
  return claimEmbeddedStore(
    config.pgliteDir,
    'server',
    process.env.npm_lifecycle_event === 'start' ? 'npm start' : 'a metrics server',
  );
}

async function keepPreparing(services: Services, signal: AbortSignal): Promise<void> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      const prepared = await prepareDatabase(services.store, services.catalog, services.config, services.logger);
      await services.seriesUpdates.start(services.store, prepared.directory, services.replicas?.caughtUp);
      await services.hooks.start(services.store, prepared.directory);
      Object.assign(services.state, prepared);
      return;
    } catch (error) {
      if (signal.aborted) throw error;
      const delay = RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length - 1)]!;
      services.logger.warn({ err: error, attempt: attempt + 1, retryInMs: delay }, 'database not ready; retrying');
      await sleep(delay, undefined, { signal }).catch(() => {});
      if (signal.aborted) throw error;
    }
  }
}

/** Resolves when nothing is `inFlight`, or when `graceMs` has passed. */
async function waitForInFlight(inFlight: () => number, graceMs: number, logger: Logger): Promise<void> {
  const deadline = Date.now() + graceMs;
  while (inFlight() > 0) {
    if (Date.now() >= deadline) {
      logger.warn({ inFlight: inFlight(), graceMs }, 'grace period over: closing with requests still open');
      return;
    }
    await sleep(25);
  }
}
