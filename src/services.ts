import type { Logger } from 'pino';
import { createSeriesRequestSchema } from './api/series-request.js';
import { createKeyVerifier, type KeyVerifier } from './auth/api-keys.js';
import type { Catalog } from './catalog/load-catalog.js';
import type { Config } from './config.js';
import type { ProjectDirectory } from './db/project-directory.js';
import type { Store } from './db/store.js';

/** Everything a request handler needs, built once at start-up and shared by REST and GraphQL. */
export interface Services {
  config: Config;
  catalog: Catalog;
  store: Store;
  directory: ProjectDirectory;
  keys: KeyVerifier;
  logger: Logger;
  requestSchema: ReturnType<typeof createSeriesRequestSchema>;
  /** The key created at first start on the embedded store, shown in GraphiQL during this run. */
  localKey: string | undefined;
}

export function createServices(parts: Omit<Services, 'keys' | 'requestSchema'>): Services {
  return {
    ...parts,
    keys: createKeyVerifier(parts.store, parts.config.apiKeys),
    requestSchema: createSeriesRequestSchema(parts.catalog),
  };
}
