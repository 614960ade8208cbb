/** `npm run db:migrate`: applies pending migrations to DATABASE_URL (or the embedded store) and syncs the catalog. */
import { CATALOG } from '../catalog/load-catalog.js';
import { syncCatalog } from '../db/sync-catalog.js';
import { withCliStore } from './open-cli-store.js';

process.exitCode = await withCliStore(async (store) => {
  await syncCatalog(store, CATALOG);
  process.stderr.write(`${store.description}: schema and catalog are up to date\n`);
});
