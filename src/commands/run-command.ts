import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { CATALOG } from '../catalog/load-catalog.js';
import { loadConfig, type Config } from '../config.js';
import { claimEmbeddedStore, StoreHeldError, type StoreClaim } from '../db/embedded-lock.js';
import { migrate } from '../db/migrate.js';
import { openStore } from '../db/open-store.js';
import { createProgressLine } from '../progress-line.js';
import type { Command, CommandOutput } from './command.js';
import { handOff } from './hand-off.js';

/**
 * Runs a CLI command against the store the server uses and resolves to its exit code.
 *
 * - With `DATABASE_URL`, against that server directly: PostgreSQL takes any number of writers.
 * - On the embedded store, in this process when no other process holds the folder.
 * - When a running server holds the embedded folder, the command is handed to that server
 *   (authenticated by the secret in the folder's owner file) and its output shown here;
 *   when the holder does not answer, or is another command, it is refused at once,
 *   naming the process that holds the folder.
 *
 * Failures print one line, never a trace: 1 when the command could not be done.
 */
export async function runCommand<Args>(command: Command<Args>, args: Args): Promise<number> {
  const output = terminalOutput();
  const gone = new AbortController();
  const stop = () => gone.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    const config = loadConfig();
    let claim: StoreClaim | undefined;
    if (config.databaseUrl === undefined && !config.pgliteDir.startsWith('memory://')) {
      try {
        claim = claimEmbeddedStore(config.pgliteDir, 'command', `npm run ${command.name}`);
      } catch (error) {
        if (!(error instanceof StoreHeldError)) throw error;
        return await handOff(error, command, args, output, gone.signal);
      }
    }
    try {
      return await runHere(command, args, config, output, gone.signal);
    } finally {
      claim?.release();
    }
  } catch (error) {
    output.progress('');
    output.err(`${(error as Error).message}\n`);
    return 1;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

/**
 * The command line's entry: when the module at `moduleUrl` is the script the process was
 * started with (not the server loading the command to run it for another process), parses
 * the arguments and runs the command, setting the exit code.
 */
export async function runFromCommandLine<Args>(moduleUrl: string, command: Command<Args>): Promise<void> {
  if (!isEntryPoint(moduleUrl)) return;
  const args = await command.parse(process.argv.slice(2));
  process.exitCode = typeof args === 'number' ? args : await runCommand(command, args);
}

// Private

function isEntryPoint(moduleUrl: string): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return pathToFileURL(realpathSync(script)).href === moduleUrl;
  } catch {
    return false;
  }
}

async function runHere<Args>(
  command: Command<Args>,
  args: Args,
  config: Config,
  output: CommandOutput,
  signal: AbortSignal,
): Promise<number> {
  const store = await openStore(config);
  try {
    const { applied } = await migrate(store).catch((cause: Error) => {
      throw new Error(`cannot prepare ${store.description}: ${cause.message}`, { cause });
    });
    return await command.run({ store, catalog: CATALOG, config, output, signal, migrationsApplied: applied }, args);
  } finally {
    await store.close();
  }
}

/** This process's own terminal: standard output and error, the progress line on standard error. */
function terminalOutput(): CommandOutput {
  const line = createProgressLine(process.stderr);
  return {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
    progress: (text) => (text === '' ? line.clear() : line.update(text)),
  };
}
