import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { CATALOG } from './catalog/load-catalog.js';
import type { Config } from './config.js';
import { describeError } from './log.js';
import { openStore } from './db/open-store.js';
import { prepareDatabase } from './db/prepare-database.js';
import type { Store } from './db/store.js';
import { createRequestListener } from './http/router.js';
import { createServices, type Services } from './services.js';

/** Waits between attempts to reach the database: doubling from half a second, capped. */
const RETRY_DELAYS_MS = [500, 1000, 2000, 4000, 5000];

export interface RunningService {
  server: Server;
  services: Services;
  /** Base URL the server listens on, e.g. http://127.0.0.1:4000. */
  url: string;
  /** Resolves once the database is prepared and data requests are served. */
  ready: Promise<void>;
  /**
   * Graceful stop: readiness and new requests get 503 (with `Connection: close`),
   * requests in flight finish (up to the grace period), then the listener and the pool close.
   */
  close(): Promise<void>;
}

/**
 * Listens at once, then prepares the database in the background, retrying with capped
 * backoff for as long as it takes: until then `/healthz` is 200, `/readyz` 503 and data
 * requests get a 503 problem with Retry-After.
 */
export async function startService(config: Config, logger: Logger, store?: Store): Promise<RunningService> {
  const db = store ?? (await openStore(config));
  logger.info({ store: db.kind }, `store: ${db.description}`);
  const services = createServices({ config, catalog: CATALOG, store: db, logger, state: { directory: undefined, localKey: undefined, stopping: false, inFlight: 0 } });

  const server = createServer(createRequestListener(services));
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
  return {
    server,
    services,
    url: `http://${host}:${port}`,
    ready,
    close: async () => {
      services.state.stopping = true;
      stopPreparing.abort();
      await waitForInFlight(services, config.shutdownGraceSeconds * 1000, logger);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await db.close();
    },
  };
}

// Private

async function keepPreparing(services: Services, signal: AbortSignal): Promise<void> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      Object.assign(services.state, await prepareDatabase(services.store, services.catalog, services.config, services.logger));
      return;
    } catch (error) {
      if (signal.aborted) throw error;
      const delay = RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length - 1)]!;
      services.logger.warn({ err: describeError(error), attempt: attempt + 1, retryInMs: delay }, 'database not ready; retrying');
      await sleep(delay, undefined, { signal }).catch(() => {});
      if (signal.aborted) throw error;
    }
  }
}

/** Resolves when no request is being answered, or when `graceMs` has passed. */
async function waitForInFlight(services: Services, graceMs: number, logger: Logger): Promise<void> {
  const deadline = Date.now() + graceMs;
  while (services.state.inFlight > 0) {
    if (Date.now() >= deadline) {
      logger.warn({ inFlight: services.state.inFlight, graceMs }, 'grace period over: closing with requests still open');
      return;
    }
    await sleep(25);
  }
}
