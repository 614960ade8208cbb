import type { Config } from '../config.js';
import { openPostgres } from './open-postgres.js';
import type { Store } from './store.js';

/** The PostgreSQL server of `DATABASE_URL` when set, the embedded store otherwise. */
export async function openStore(config: Config): Promise<Store> {
  if (config.databaseUrl === undefined) {
    // Loaded only when used: the embedded PostgreSQL is a large module a server deployment never needs.
    const { openPglite } = await import('./open-pglite.js');
    return openPglite(config.pgliteDir);
  }
  return openPostgres({
    url: config.databaseUrl,
    poolSize: config.databasePoolSize,
    statementTimeoutSeconds: config.statementTimeoutSeconds,
    connectTimeoutSeconds: config.connectTimeoutSeconds,
  });
}
