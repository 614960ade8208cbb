import { fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { CATALOG } from '../catalog/load-catalog.js';
import type { Config } from '../config.js';
import { openPglite } from '../db/open-pglite.js';
import { createLogger, flushLogs } from '../log.js';
import { prepareDatabase } from './prepare-database.js';

/**
 * A first start on an empty embedded folder, made in a child process: the new database
 * (PGlite's initdb), its migrations, the sample data and the local key. Making a database
 * grows PGlite's WebAssembly memory to about 800 MB of resident memory, and that memory never
 * shrinks while the process lives (a worker thread's, freed when it ends, still left about
 * 130 MB behind); a child's goes back to the system when it exits. The server then opens the
 * folder as on any later start, and its own preparation finds everything done. Run from the
 * TypeScript sources (tests), where Node cannot load this module by itself, the server
 * prepares the folder itself, as it does when the child fails.
 */
export async function prepareNewFolder(config: Config, logger: Logger): Promise<void> {
  if (existsSync(join(config.pgliteDir, 'PG_VERSION')) || import.meta.url.endsWith('.ts')) return;
  const started = Date.now();
  try {
    await new Promise<void>((resolve, reject) => {
      const child = fork(fileURLToPath(import.meta.url), [], {
        env: { ...process.env, [CHILD_FLAG]: '1' },
        stdio: 'inherit',
        serialization: 'advanced',
      });
      let done = false;
      child.once('message', () => (done = true));
      child.once('error', reject);
      child.once('exit', (code) =>
        done ? resolve() : reject(new Error(`the first-start process ended (${code}) before it finished`)),
      );
      child.send({ config } satisfies FirstStartMessage);
    });
    logger.info({ ms: Date.now() - started }, 'embedded store made by a first-start process');
  } catch (error) {
    logger.warn({ err: error }, 'making the embedded store in a child process failed; the server prepares it itself');
  }
}

// Private

/** Set in the child's environment: this module then runs as the first-start process. */
const CHILD_FLAG = 'METRICS_FIRST_START_CHILD';

interface FirstStartMessage {
  config: Config;
}

/** The child: prepares the folder as the server would, closes it, says so and ends. */
async function prepareInChild({ config }: FirstStartMessage): Promise<void> {
  const store = await openPglite(config.pgliteDir);
  try {
    await prepareDatabase(store, CATALOG, config, createLogger(config));
  } finally {
    await store.close();
  }
  // Standard error and output are synchronous here (a terminal, pipe or file): nothing is lost by ending now.
  process.send!('done', () => {
    flushLogs();
    process.exit(0);
  });
}

if (process.env[CHILD_FLAG] === '1' && process.send !== undefined) {
  // A Ctrl-C reaches the whole process group: the server waits for this child to finish (the
  // load is one transaction, and the key it makes is shown), so the child carries on.
  process.on('SIGINT', () => {});
  process.once('message', (message: FirstStartMessage) => {
    prepareInChild(message).catch((error: unknown) => {
      process.stderr.write(`first start failed: ${(error as Error).stack ?? String(error)}\n`);
      process.exit(1);
    });
  });
}
