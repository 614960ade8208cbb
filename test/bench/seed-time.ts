/**
 * `npx tsx test/bench/seed-time.ts`: seconds to seed 3 years into a new in-memory PGlite, without
 * and with the sample revision history, twice each.
 */
import { CATALOG } from '../../src/catalog/load-catalog.js';
import { migrate } from '../../src/db/migrate.js';
import { openPglite } from '../../src/db/open-pglite.js';
import { seedDatabase } from '../../src/seed/seed-database.js';

for (const history of [false, true, false, true]) {
  const store = await openPglite('memory://');
  await migrate(store);
  const started = Date.now();
  await seedDatabase(store, CATALOG, { years: 3, lastDay: 20_600, history });
  process.stdout.write(`history ${history}: ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  await store.close();
}
