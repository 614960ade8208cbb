import cluster from 'node:cluster';
import type { Config } from '../config.js';
import type { ExampleRange } from '../services.js';
import { printWelcome } from './welcome.js';

/** What a worker tells the primary once it serves. */
export interface WorkerReady {
  ready: string;
  example?: ExampleRange;
}

/**
 * The primary process with WORKERS > 1: forks that many servers sharing the port (each
 * prepares the database under the migration lock), replaces one that exits, and stops
 * them all on SIGTERM or SIGINT.
 */
export function superviseWorkers(config: Config): void {
  const started = Date.now();
  let ready = 0;
  for (let i = 0; i < config.workers; i += 1) cluster.fork();
  cluster.on('message', (_worker, message: WorkerReady) => {
    ready += 1;
    if (ready === config.workers) printWelcome(message.ready, Date.now() - started, message.example, config);
  });
  let stopping = false;
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    process.stderr.write(`worker ${worker.process.pid} exited (${signal ?? code}); starting another\n`);
    cluster.fork();
  });
  const stop = () => {
    stopping = true;
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    cluster.on('exit', () => {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
    });
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
