/**
 * `npm run db:seed [-- --years N]`: loads deterministic sample data for every metric and
 * slug into DATABASE_URL (or the embedded store), replacing points on the same days.
 */
import { parseArgs } from 'node:util';
import { runCommand } from '../commands/run-command.js';
import { seedCommand } from '../commands/seed.js';

const USAGE = 'usage: npm run db:seed [-- --years N]   (N from 1 to 30; default SEED_YEARS or 3)';

process.exitCode = await main();

// Private

async function main(): Promise<number> {
  let years: number | undefined;
  try {
    const { values } = parseArgs({ options: { years: { type: 'string' } }, strict: true });
    years = values.years === undefined ? undefined : Number(values.years);
    if (years !== undefined && !(Number.isInteger(years) && years >= 1 && years <= 30)) throw new Error(`--years must be a whole number from 1 to 30, got ${values.years}`);
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  return runCommand(seedCommand, years === undefined ? {} : { years });
}
