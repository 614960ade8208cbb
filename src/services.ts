import type { Logger } from 'pino';
import { createKeyVerifier, type KeyVerifier } from './auth/api-keys.js';
import type { Catalog } from './catalog/load-catalog.js';
import type { Config } from './config.js';
import type { ProjectDirectory } from './db/project-directory.js';
import { createReadRouter, type ReadRouter } from './db/read-replicas.js';
import type { Store } from './db/store.js';
import { createResponseCache, type ResponseCache } from './cache/response-cache.js';
import { createAnswerBudget, GRAPHQL_ANSWER_BUDGET_BYTES, type AnswerBudget } from './limits/answer-budget.js';
import { createMemoryRateLimitStore } from './limits/memory-bucket-store.js';
import type { createRedisRateLimitStore } from './limits/redis-bucket-store.js';
import { createRateLimiter, type RateLimiter, type RateLimitStore } from './limits/rate-limiter.js';
import { createPageLoadLimit, type PageLoadLimit } from './limits/page-loads.js';
import { createRefusedKeyLimit, type RefusedKeyLimit } from './limits/refused-keys.js';
import { createStoredSpans, type StoredSpans } from './limits/stored-spans.js';
import { createUsageCounter, type UsageCounter } from './limits/usage-counter.js';
import { createSeriesUpdates, type SeriesUpdates } from './live/series-updates.js';
import { createServiceMetrics, type ServiceMetrics } from './ops/prometheus.js';
import { createHookWorker, type HookWorker } from './hooks/hook-worker.js';
import { createRevisionProfiles, type RevisionProfiles } from './revisions/revision-profiles.js';

const IGNORED_METRICS: ServiceMetrics = {
  observeRequest: () => {},
  render: async () => ({ contentType: 'text/plain', body: '' }),
};

/** Everything a request handler needs, built once at start-up and shared by REST and GraphQL. */
export interface Services {
  config: Config;
  catalog: Catalog;
  store: Store;
  /** Where data reads go: a healthy replica when DATABASE_READ_URLS names some, else `store`. */
  reads: Store;
  /** The replicas and their state, when there are any. */
  replicas: ReadRouter | undefined;
  logger: Logger;
  /** The current time; injected so tests do not depend on today's date. */
  clock: () => Date;
  /** What start-up has prepared so far and whether shutdown has begun. */
  state: ServiceState;
  keys: KeyVerifier;
  /** One bucket per key, shared by REST and GraphQL. */
  rateLimiter: RateLimiter;
  /** Refused keys per client address, in the rate limit's store. */
  refusedKeys: RefusedKeyLimit;
  /** Loads of GraphiQL's page and its files per client address, in the rate limit's store. */
  graphiqlLoads: PageLoadLimit;
  /** Live "data landed" events for GraphQL subscriptions. */
  seriesUpdates: SeriesUpdates;
  /** Every series' first and last stored day, read again after writes: requests are priced by what they read. */
  storedSpans: StoredSpans;
  /** Bytes of large GraphQL answers being built at once. */
  answerBudget: AnswerBudget;
  /** Hot answers, dropped whenever a write is announced. */
  responseCache: ResponseCache;
  /** Webhook deliveries: started once the database is prepared, stopped at shutdown. */
  hooks: HookWorker;
  /** Metrics' revision profiles, computed again after writes to their metric, at most once a minute. */
  revisionProfiles: RevisionProfiles;
  /** Request counts and latencies and the other figures of `GET /metrics`. */
  metrics: ServiceMetrics;
  /** What each key spent per hour, counted in memory and written to the store every few seconds. */
  usage: UsageCounter;
  /** Releases what the services hold besides the store (the Redis connection), writing the last usage counts. */
  close(): Promise<void>;
}

/** Mutable start-up, traffic and shutdown state, shared by every request. */
export interface ServiceState {
  /** Set once migrations, catalog and directory are in place. */
  directory: ProjectDirectory | undefined;
  /** A month of stored data for examples (GraphiQL's first query, the welcome message); set with the directory. */
  example: ExampleRange | undefined;
  /** No key existed on the PostgreSQL server when the database was prepared (the welcome says how to make one). */
  keyless: boolean;
  /** True from the moment a graceful shutdown begins. */
  stopping: boolean;
  /** Requests being answered, which a graceful shutdown waits for. */
  inFlight: number;
}

/** The last 30 stored days of a series everyone has (token-price-usd for ethereum). */
export interface ExampleRange {
  from: string;
  to: string;
}

export interface ServiceParts {
  config: Config;
  catalog: Catalog;
  store: Store;
  logger: Logger;
  clock?: () => Date;
  /**
   * Opens the shared rate-limit store; required when `REDIS_URL` is set. Passed in so a
   * process without Redis never loads its client (ioredis is about 2 MB of heap that every
   * full collection would mark): see {@link loadRedisStoreOpener}.
   */
  openRedisStore?: typeof createRedisRateLimitStore;
}

/** The Redis store's opener when `REDIS_URL` is set, loaded only then. */
export async function loadRedisStoreOpener(
  config: Pick<Config, 'redisUrl'>,
): Promise<typeof createRedisRateLimitStore | undefined> {
  if (config.redisUrl === undefined) return undefined;
  return (await import('./limits/redis-bucket-store.js')).createRedisRateLimitStore;
}

export function createServices(parts: ServiceParts): Services {
  const clock = parts.clock ?? (() => new Date());
  const seriesUpdates = createSeriesUpdates(
    { perKey: parts.config.subscriptionsPerKey, total: parts.config.subscriptionsMax },
    parts.logger,
  );
  const responseCache = createResponseCache(Math.floor(parts.config.responseCacheMb * 2 ** 20));
  const storedSpans = createStoredSpans(parts.store, parts.logger);
  const revisionProfiles = createRevisionProfiles(clock);
  seriesUpdates.observe((listening, update) => {
    responseCache.invalidate(listening);
    storedSpans.listening(listening);
    if (update !== undefined) storedSpans.written(update.name, update.slug);
    if (update === undefined) revisionProfiles.listening(listening);
    else revisionProfiles.written(update.name);
  });
  const { config } = parts;
  const replicas =
    config.databaseReadUrls.length === 0 || parts.store.kind !== 'postgres'
      ? undefined
      : createReadRouter(
          parts.store,
          {
            urls: config.databaseReadUrls,
            maxLagSeconds: config.replicaMaxLagSeconds,
            checkEverySeconds: Math.min(5, Math.max(0.5, config.replicaMaxLagSeconds / 3)),
            poolSize: config.databasePoolSize,
            statementTimeoutSeconds: config.statementTimeoutSeconds,
            connectTimeoutSeconds: config.connectTimeoutSeconds,
          },
          parts.logger,
        );
  const state: ServiceState = {
    directory: undefined,
    example: undefined,
    keyless: false,
    stopping: false,
    inFlight: 0,
  };
  const hooks = createHookWorker({ catalog: parts.catalog, config, logger: parts.logger, clock });
  // Every write announced may be work for a hook.
  seriesUpdates.observe(() => hooks.wake());
  const memory = createMemoryRateLimitStore();
  const redis = openSharedStore(parts, memory);
  const usage = createUsageCounter({ store: parts.store, clock, logger: parts.logger });
  return {
    ...parts,
    reads: replicas?.reads ?? parts.store,
    replicas,
    clock,
    seriesUpdates,
    responseCache,
    storedSpans,
    hooks,
    revisionProfiles,
    answerBudget: createAnswerBudget(GRAPHQL_ANSWER_BUDGET_BYTES),
    state,
    keys: createKeyVerifier(parts.store, parts.config.apiKeys),
    rateLimiter: createRateLimiter(
      { perMinute: parts.config.rateLimitPerMinute, burst: parts.config.rateLimitBurst },
      { store: redis ?? memory, now: () => clock().getTime() },
    ),
    refusedKeys: createRefusedKeyLimit(config.refusedKeysPerMinute, redis ?? memory, () => clock().getTime()),
    graphiqlLoads: createPageLoadLimit(config.graphiqlLoadsPerMinute, redis ?? memory, () => clock().getTime()),
    // Nothing is counted when nothing can read it: the bench's REST path pays for no metrics.
    metrics:
      config.metrics === 'off'
        ? IGNORED_METRICS
        : createServiceMetrics({
            responseCache,
            seriesUpdates,
            inFlight: () => state.inFlight,
            hookDeliveries: () => hooks.outcomes,
            rateLimitsShared: redis === undefined ? undefined : () => redis.shared,
            replicas: replicas === undefined ? undefined : () => replicas.states(),
          }),
    usage,
    close: async () => {
      await usage.close();
      await redis?.close();
      await replicas?.close();
    },
  };
}

// Private

/** The Redis store when `REDIS_URL` is set (its opener must then be given); none otherwise. */
function openSharedStore(parts: ServiceParts, fallback: RateLimitStore) {
  const url = parts.config.redisUrl;
  if (url === undefined) return undefined;
  if (parts.openRedisStore === undefined)
    throw new Error('REDIS_URL is set but no Redis store opener was given (see loadRedisStoreOpener)');
  return parts.openRedisStore(url, fallback, parts.logger);
}
