import cluster from 'node:cluster';
import { loadConfig, type Config } from './config.js';
import { StoreHeldError } from './db/embedded-lock.js';
import { createLogger, flushLogs } from './log.js';
import { tuneHeap } from './start/heap-tuning.js';
import { startService } from './start/start-service.js';
import { printWelcome } from './start/welcome.js';
import { superviseWorkers, type WorkerReady } from './start/workers.js';

/**
 * Entry point of `npm start`: reads the configuration, starts the service, and stops it on
 * SIGTERM or SIGINT. With WORKERS > 1 the primary process only supervises that many
 * servers sharing the port. Configuration and start-up failures end with a message, not a trace.
 */
async function main(): Promise<void> {
  tuneHeap();
  const config = readConfig();
  if (config.workers > 1 && cluster.isPrimary) return superviseWorkers(config);
  const logger = createLogger(config);
  const started = Date.now();
  // Listened for from the first moment, so a Ctrl-C during start-up still closes the store
  // cleanly (once it is open) and writes the last lines.
  const starting = startService(config, logger);
  const stop = async (signal: string) => {
    // A worker hears Ctrl-C twice: the terminal's SIGINT and its primary's SIGTERM. One stop.
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    await (await starting.catch(() => undefined))?.close();
    logger.info('stopped');
    exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
  const service = await starting;

  logger.info({ url: service.url }, 'listening; preparing the database');
  await service.ready;
  // A Ctrl-C during a long start-up step (seeding runs on this thread) waits for the event
  // loop's next poll for I/O: let one happen, so a stopping server says nothing of being ready.
  await afterNextPoll();
  if (stopping) return;
  logger.info({ url: service.url, ms: Date.now() - started, pid: process.pid }, 'ready');
  const { example, keyless } = service.services.state;
  if (cluster.isPrimary) printWelcome(service.url, Date.now() - started, { example, keyless }, config);
  else process.send?.({ ready: service.url, example, keyless } satisfies WorkerReady);
}

/**
 * Resolves once the event loop has polled for I/O, signals included. An immediate set now
 * may run before the next poll (when this runs in the poll phase); one set from it cannot.
 */
function afterNextPoll(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

/** Set by SIGTERM or SIGINT: a start-up cut short by it is not a failure. */
let stopping = false;

function readConfig(): Config {
  try {
    return loadConfig();
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(2);
  }
}

/** Exits once the log lines written so far have reached standard output. */
function exit(code: number): never {
  flushLogs();
  process.exit(code);
}

main().catch((error: unknown) => {
  if (stopping) return; // the stop under way exits
  if (error instanceof StoreHeldError) {
    process.stderr.write(
      `${error.message}; only one process may serve an embedded store. Stop ` +
        `that process, or give this one another PGLITE_DIR or a DATABASE_URL.\n`,
    );
  } else {
    process.stderr.write(`start-up failed: ${(error as Error).message}\n`);
  }
  exit(1);
});
