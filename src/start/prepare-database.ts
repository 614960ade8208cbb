import type { Logger } from 'pino';
import { generateApiKey, hashApiKey } from '../auth/api-keys.js';
import type { Catalog } from '../catalog/load-catalog.js';
import type { Config } from '../config.js';
import { fromEpochDay, toEpochDay } from '../dates.js';
import { countApiKeys, insertApiKey } from '../db/api-key-queries.js';
import { migrate } from '../db/migrate.js';
import { loadProjectDirectory, type ProjectDirectory } from '../db/project-directory.js';
import { readCoverage } from '../db/read-coverage.js';
import type { Store } from '../db/store.js';
import { syncCatalog } from '../db/sync-catalog.js';
import { hasPoints } from '../db/write-points.js';
import { createProgressLine } from '../progress-line.js';
import { seedDatabase } from '../seed/seed-database.js';
import type { ExampleRange } from '../services.js';

export interface PreparedDatabase {
  directory: ProjectDirectory;
  example: ExampleRange | undefined;
  /** A PostgreSQL server with no key at all: the welcome says how to make one. */
  keyless: boolean;
}

/**
 * Brings a database up to date for serving: migrations, the catalog's metrics and
 * projects, sample data when the embedded store is empty, a first local key (printed
 * once, on standard error, and kept nowhere in plain text; on a server none is made, and
 * `keyless` says so), the slug → project id
 * directory, and a month of stored data for examples. Safe to run again after a failure.
 */
export async function prepareDatabase(
  store: Store,
  catalog: Catalog,
  config: Config,
  logger: Logger,
): Promise<PreparedDatabase> {
  const { applied } = await migrate(store);
  if (applied.length > 0) logger.info({ applied }, 'migrations applied');
  await syncCatalog(store, catalog);
  if (store.kind === 'pglite' && !(await hasPoints(store))) await seedEmbedded(store, catalog, config, logger);
  const keyless = await ensureLocalKey(store, config);
  const directory = await loadProjectDirectory(store);
  return { directory, example: await exampleRange(store, directory), keyless };
}

// Private

async function seedEmbedded(store: Store, catalog: Catalog, config: Config, logger: Logger): Promise<void> {
  const progress = createProgressLine(process.stderr);
  const started = Date.now();
  progress.update('seeding sample data…');
  const result = await seedDatabase(store, catalog, { years: config.seedYears, history: true });
  progress.done(
    `seeded ${result.points} sample points for ${result.series}` +
      ` series in ${((Date.now() - started) / 1000).toFixed(1)}` +
      ` ` +
      `s`,
  );
  logger.info({ points: result.points }, 'embedded database seeded with sample data');
}

/**
 * With no key configured anywhere: on the embedded store, creates the `local` key and
 * prints it once. On a server no key is made, because instances share the database and
 * each would print (or race to make) its own; true then, so the welcome, printed once
 * for all workers, says how to make one.
 */
async function ensureLocalKey(store: Store, config: Config): Promise<boolean> {
  if (config.apiKeys.length > 0 || (await countApiKeys(store)) > 0) return false;
  if (store.kind !== 'pglite') return true;
  const key = generateApiKey();
  await insertApiKey(store, 'local', hashApiKey(key));
  process.stderr.write(`\nCreated API key "local" (shown once, keep it): ${key}\nSend it as the x-api-key header.\n\n`);
  return false;
}

/** The last 30 stored days of token-price-usd for ethereum, when it has data. */
async function exampleRange(store: Store, directory: ProjectDirectory): Promise<ExampleRange | undefined> {
  const id = directory.idOf('token-price-usd', 'ethereum');
  const [coverage] = id === undefined ? [] : await readCoverage(store, [id]);
  if (coverage?.last == null) return undefined;
  return { from: fromEpochDay(toEpochDay(coverage.last) - 29), to: coverage.last };
}
