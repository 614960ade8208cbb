import type { Logger } from 'pino';
import { createSeriesRequestSchema } from './api/series-request.js';
import { createKeyVerifier, type KeyVerifier } from './auth/api-keys.js';
import type { Catalog } from './catalog/load-catalog.js';
import type { Config } from './config.js';
import type { ProjectDirectory } from './db/project-directory.js';
import type { Store } from './db/store.js';
import { createRateLimiter, type RateLimiter } from './http/rate-limit.js';

/** Everything a request handler needs, built once at start-up and shared by REST and GraphQL. */
export interface Services {
  config: Config;
  catalog: Catalog;
  store: Store;
  /** What start-up has prepared so far and whether shutdown has begun; see `readyDirectory`. */
  state: ServiceState;
  keys: KeyVerifier;
  /** One bucket per key, shared by REST and GraphQL; per process (see src/http/rate-limit.ts). */
  rateLimiter: RateLimiter;
  logger: Logger;
  requestSchema: ReturnType<typeof createSeriesRequestSchema>;
}

/** Mutable start-up, traffic and shutdown state, shared by every request. */
export interface ServiceState {
  /** Set once migrations, catalog and directory are in place. */
  directory: ProjectDirectory | undefined;
  /** The key created at first start on the embedded store, shown in GraphiQL during this run. */
  localKey: string | undefined;
  /** True from the moment a graceful shutdown begins. */
  stopping: boolean;
  /** Requests being answered, which a graceful shutdown waits for. */
  inFlight: number;
}

export function createServices(parts: Omit<Services, 'keys' | 'rateLimiter' | 'requestSchema'>): Services {
  return {
    ...parts,
    keys: createKeyVerifier(parts.store, parts.config.apiKeys),
    rateLimiter: createRateLimiter({ perMinute: parts.config.rateLimitPerMinute, burst: parts.config.rateLimitBurst }),
    requestSchema: createSeriesRequestSchema(parts.catalog),
  };
}
