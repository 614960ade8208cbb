import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { generateApiKey, hashApiKey } from './auth/api-keys.js';
import { CATALOG } from './catalog/load-catalog.js';
import type { Config } from './config.js';
import { countApiKeys, insertApiKey } from './db/api-key-queries.js';
import { migrate } from './db/migrate.js';
import { openStore } from './db/open-store.js';
import { loadProjectDirectory } from './db/project-directory.js';
import type { Store } from './db/store.js';
import { syncCatalog } from './db/sync-catalog.js';
import { hasPoints } from './db/write-points.js';
import { createRequestListener } from './http/router.js';
import { createProgressLine } from './progress-line.js';
import { seedDatabase } from './seed/seed-database.js';
import { createServices, type Services } from './services.js';

export interface RunningService {
  server: Server;
  services: Services;
  /** Base URL the server listens on, e.g. http://127.0.0.1:4000. */
  url: string;
  close(): Promise<void>;
}

/**
 * Opens the store, brings its schema and catalog up to date, fills an empty embedded
 * database with sample data, and starts listening. Resolves once requests can be served.
 */
export async function startService(config: Config, logger: Logger, store?: Store): Promise<RunningService> {
  const db = store ?? (await openStore(config));
  logger.info({ store: db.kind }, `store: ${db.description}`);
  const { applied } = await migrate(db);
  if (applied.length > 0) logger.info({ applied }, 'migrations applied');
  await syncCatalog(db, CATALOG);
  if (db.kind === 'pglite' && !(await hasPoints(db))) await seedEmbedded(db, config, logger);
  const localKey = await ensureLocalKey(db, config);
  const services = createServices({ config, catalog: CATALOG, store: db, directory: await loadProjectDirectory(db), logger, localKey });

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
  return {
    server,
    services,
    url: `http://${host}:${port}`,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await db.close();
    },
  };
}

// Private

async function seedEmbedded(db: Store, config: Config, logger: Logger): Promise<void> {
  const progress = createProgressLine(process.stderr);
  const started = Date.now();
  const result = await seedDatabase(db, CATALOG, {
    years: config.seedYears,
    onProgress: (p) => progress.update(`seeding sample data: ${p.seriesDone}/${p.seriesTotal} series`),
  });
  progress.done(`seeded ${result.points} sample points for ${result.seriesTotal} series in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  await db.exec('analyze');
  logger.info({ points: result.points }, 'embedded database seeded with sample data');
}

/**
 * On the embedded store with no key configured anywhere, creates the `local` key. The
 * plain key exists only in this process: it is printed once and offered in GraphiQL.
 */
async function ensureLocalKey(db: Store, config: Config): Promise<string | undefined> {
  if (db.kind !== 'pglite' || config.apiKeys.length > 0 || (await countApiKeys(db)) > 0) return undefined;
  const key = generateApiKey();
  await insertApiKey(db, 'local', hashApiKey(key));
  process.stderr.write(`\nCreated API key "local" (shown once, keep it): ${key}\nSend it as the x-api-key header.\n\n`);
  return key;
}
