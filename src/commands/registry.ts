import type { Command, CommandContext } from './command.js';
import { hooksCommand } from './hooks.js';
import { importCommand } from './import.js';
import { keysCommand } from './keys.js';
import { migrateCommand } from './migrate.js';
import { seedCommand } from './seed.js';
import { syncCommand } from './sync.js';

/**
 * A command as the server runs it for a CLI process: its arguments arrive as JSON, as that
 * process parsed them (only a holder of the store's secret can hand a command over).
 */
export interface HandedOffCommand {
  name: string;
  /** What the server does with the command when it is stopped part-way (see {@link Command.whenLeft}). */
  whenLeft: string;
  run(context: CommandContext, args: unknown): Promise<number>;
}

/** Every command a CLI process may hand to the server holding the embedded store, by name. */
export const COMMANDS: ReadonlyMap<string, HandedOffCommand> = new Map(
  [
    accepting(hooksCommand),
    accepting(importCommand),
    accepting(keysCommand),
    accepting(migrateCommand),
    accepting(seedCommand),
    accepting(syncCommand),
  ].map((c) => [c.name, c]),
);

// Private

function accepting<Args>(command: Command<Args>): HandedOffCommand {
  return { name: command.name, whenLeft: command.whenLeft, run: (context, args) => command.run(context, args as Args) };
}
