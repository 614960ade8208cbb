import type { Logger } from 'pino';
import { generateApiKey, hashApiKey } from '../auth/api-keys.js';
import type { Catalog } from '../catalog/load-catalog.js';
import type { Config } from '../config.js';
import { createProgressLine } from '../progress-line.js';
import { seedDatabase } from '../seed/seed-database.js';
import { countApiKeys, insertApiKey } from './api-key-queries.js';
import { migrate } from './migrate.js';
import { loadProjectDirectory, type ProjectDirectory } from './project-directory.js';
import type { Store } from './store.js';
import { syncCatalog } from './sync-catalog.js';
import { hasPoints } from './write-points.js';

export interface PreparedDatabase {
  directory: ProjectDirectory;
  /** The key created at first start on the embedded store; it exists in plain text only in this process. */
  localKey: string | undefined;
}

/**
 * Brings a database up to date for serving: migrations, the catalog's metrics and
 * projects, sample data when the embedded store is empty, a first local key, and the
 * slug → project id directory. Safe to run again after a failure.
 */
export async function prepareDatabase(store: Store, catalog: Catalog, config: Config, logger: Logger): Promise<PreparedDatabase> {
  const { applied } = await migrate(store);
  if (applied.length > 0) logger.info({ applied }, 'migrations applied');
  await syncCatalog(store, catalog);
  if (store.kind === 'pglite' && !(await hasPoints(store))) await seedEmbedded(store, catalog, config, logger);
  const localKey = await ensureLocalKey(store, config);
  return { directory: await loadProjectDirectory(store), localKey };
}

// Private

async function seedEmbedded(store: Store, catalog: Catalog, config: Config, logger: Logger): Promise<void> {
  const progress = createProgressLine(process.stderr);
  const started = Date.now();
  const result = await seedDatabase(store, catalog, {
    years: config.seedYears,
    onProgress: (p) => progress.update(`seeding sample data: ${p.seriesDone}/${p.seriesTotal} series`),
  });
  await store.exec('analyze');
  progress.done(`seeded ${result.points} sample points for ${result.seriesTotal} series in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  logger.info({ points: result.points }, 'embedded database seeded with sample data');
}

/** On the embedded store with no key configured anywhere, creates the `local` key and prints it once. */
async function ensureLocalKey(store: Store, config: Config): Promise<string | undefined> {
  if (store.kind !== 'pglite' || config.apiKeys.length > 0 || (await countApiKeys(store)) > 0) return undefined;
  const key = generateApiKey();
  await insertApiKey(store, 'local', hashApiKey(key));
  process.stderr.write(`\nCreated API key "local" (shown once, keep it): ${key}\nSend it as the x-api-key header.\n\n`);
  return key;
}
