import { z } from 'zod';
import { seedDatabase } from '../seed/seed-database.js';
import type { Command } from './command.js';

const seedArgs = z.object({ years: z.number().int().min(1).max(30).optional() });

export type SeedArgs = z.infer<typeof seedArgs>;

/** `db:seed [--years N]`: deterministic sample data for every metric and slug, replacing points on the same days. */
export const seedCommand: Command<SeedArgs> = {
  name: 'db:seed',
  argsSchema: seedArgs,
  whenLeft: 'the server still finishes seeding',
  async run({ store, catalog, config, output }, { years }) {
    const started = Date.now();
    output.progress(`seeding ${years ?? config.seedYears} years of sample data…`);
    const result = await seedDatabase(store, catalog, { years: years ?? config.seedYears });
    output.progress('');
    output.err(`seeded ${result.points} points for ${result.series} series into ${store.description} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    return 0;
  },
};
