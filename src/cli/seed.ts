/**
 * `npm run db:seed [-- --years N]`: loads deterministic sample data for every metric and
 * slug into DATABASE_URL (or the embedded store), replacing points on the same days.
 */
import { parseArgs } from 'node:util';
import { CATALOG } from '../catalog/load-catalog.js';
import { createProgressLine } from '../progress-line.js';
import { seedDatabase } from '../seed/seed-database.js';
import { withCliStore } from './open-cli-store.js';

const USAGE = 'usage: npm run db:seed [-- --years N]   (N from 1 to 30; default SEED_YEARS or 3)';

let years: number | undefined;
try {
  const { values } = parseArgs({ options: { years: { type: 'string' } }, strict: true });
  years = values.years === undefined ? undefined : Number(values.years);
  if (years !== undefined && !(Number.isInteger(years) && years >= 1 && years <= 30)) throw new Error(`--years must be a whole number from 1 to 30, got ${values.years}`);
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n${USAGE}\n`);
  process.exit(2);
}

process.exitCode = await withCliStore(async (store, config) => {
  const progress = createProgressLine(process.stderr);
  const started = Date.now();
  const result = await seedDatabase(store, CATALOG, {
    years: years ?? config.seedYears,
    onProgress: (p) => progress.update(`seeding: ${p.seriesDone}/${p.seriesTotal} series, ${p.points} points written`),
  });
  await store.exec('analyze');
  progress.done(`seeded ${result.points} points for ${result.seriesTotal} series into ${store.description} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
});
