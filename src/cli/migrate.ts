/** `npm run db:migrate`: applies pending migrations to DATABASE_URL (or the embedded store) and syncs the catalog. */
import { migrateCommand } from '../commands/migrate.js';
import { runCommand } from '../commands/run-command.js';

if (process.argv.length > 2) {
  console.error(`db:migrate takes no arguments; got "${process.argv.slice(2).join(' ')}"`);
  process.exitCode = 2;
} else {
  process.exitCode = await runCommand(migrateCommand, {});
}
