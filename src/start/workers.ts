import cluster, { type Worker } from 'node:cluster';
import type { Config } from '../config.js';
import { printWelcome, type WelcomeFacts } from './welcome.js';

/** What a worker tells the primary once it serves. */
export interface WorkerReady extends WelcomeFacts {
  ready: string;
}

/**
 * The primary process with WORKERS > 1: forks that many servers sharing the port (each
 * prepares the database under the migration lock), replaces one that exits after it
 * served, and stops them all on SIGTERM or SIGINT (exit 0). A worker that exits before it
 * ever served failed to start (the port taken, say; it said why on standard error): its
 * replacement would fail the same way, so the others are stopped and the process exits
 * 1, as a single server's failed start-up does, instead of starting workers for ever.
 */
export function superviseWorkers(config: Config): void {
  const started = Date.now();
  const served = new Set<Worker>();
  let ready = 0;
  for (let i = 0; i < config.workers; i += 1) cluster.fork();
  // GET /metrics in a worker asks the primary for every worker's figures (prom-client loaded only then).
  if (config.metrics !== 'off') void import('../ops/cluster-metrics.js').then((m) => m.gatherForWorkers());
  cluster.on('message', (worker, message: unknown) => {
    // Any other message is figures exchanged for /metrics.
    if (typeof message !== 'object' || message === null || !('ready' in message)) return;
    const { ready: url, ...facts } = message as WorkerReady;
    served.add(worker);
    ready += 1;
    if (ready === config.workers) printWelcome(url, Date.now() - started, facts, config);
  });
  let stopping = false;
  const stop = (code: number) => {
    stopping = true;
    const exitWhenNoneLeft = () => {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(code);
    };
    cluster.on('exit', exitWhenNoneLeft);
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    exitWhenNoneLeft();
  };
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    if (!served.has(worker) && code !== 0) {
      process.stderr.write(`worker ${worker.process.pid} failed to start (${signal ?? code}); stopping\n`);
      stop(1);
      return;
    }
    served.delete(worker);
    process.stderr.write(`worker ${worker.process.pid} exited (${signal ?? code}); starting another\n`);
    cluster.fork();
  });
  process.once('SIGTERM', () => stop(0));
  process.once('SIGINT', () => stop(0));
}
