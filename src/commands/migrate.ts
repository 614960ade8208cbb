/** `npm run db:migrate`: applies pending migrations to DATABASE_URL (or the embedded store) and syncs the catalog. */
import { syncCatalog } from '../db/sync-catalog.js';
import type { Command } from './command.js';
import { runFromCommandLine } from './run-command.js';
import { counted } from '../counted.js';

/** `db:migrate`: the migrations ran when the store was opened; this syncs the catalog and says what was applied. */
export const migrateCommand: Command<Record<string, never>> = {
  name: 'db:migrate',
  parse(argv) {
    if (argv.length === 0) return {};
    console.error(`db:migrate takes no arguments; got "${argv.join(' ')}"`);
    return 2;
  },
  whenLeft: 'the server still finishes it',
  async run({ store, catalog, output, migrationsApplied = [] }) {
    await syncCatalog(store, catalog);
    const applied =
      migrationsApplied.length === 0
        ? ''
        : ` applied ${counted(migrationsApplied.length, 'migration')} (${migrationsApplied.join(', ')});`;
    output.err(`${store.description}:${applied} schema and catalog are up to date\n`);
    return 0;
  },
};

await runFromCommandLine(import.meta.url, migrateCommand);
