/**
 * `npm run db:seed [-- --years N]`: loads deterministic sample data for every metric and
 * slug into DATABASE_URL (or the embedded store), replacing points on the same days.
 */
import { parseArgs } from 'node:util';
import { seedDatabase } from '../seed/seed-database.js';
import type { Command } from './command.js';
import { runFromCommandLine } from './run-command.js';

export interface SeedArgs {
  /** 1 to 30; SEED_YEARS when absent. */
  years?: number;
}

const USAGE = 'usage: npm run db:seed [-- --years N]   (N from 1 to 30; default SEED_YEARS or 3)';

/** `db:seed [--years N]`: deterministic sample data for every metric and slug, replacing points on the same days. */
export const seedCommand: Command<SeedArgs> = {
  name: 'db:seed',
  parse: parseSeedArgs,
  whenLeft: 'the server still finishes seeding',
  async run({ store, catalog, config, output }, { years }) {
    const started = Date.now();
    output.progress(`seeding ${years ?? config.seedYears} years of sample data…`);
    const result = await seedDatabase(store, catalog, { years: years ?? config.seedYears });
    output.progress('');
    output.err(
      `seeded ${result.points} points for ${result.series} series into ${store.description} ` +
        `in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
    );
    return 0;
  },
};

// Private

function parseSeedArgs(argv: string[]): SeedArgs | number {
  let years: number | undefined;
  try {
    const { values } = parseArgs({ args: argv, options: { years: { type: 'string' } }, strict: true });
    years = values.years === undefined ? undefined : Number(values.years);
    if (years !== undefined && !(Number.isInteger(years) && years >= 1 && years <= 30))
      throw new Error(`--years must be a whole number from 1 to 30, got ${values.years}`);
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  return years === undefined ? {} : { years };
}

await runFromCommandLine(import.meta.url, seedCommand);
