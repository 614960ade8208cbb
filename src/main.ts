import cluster from 'node:cluster';
import { loadConfig, type Config } from './config.js';
import { createLogger } from './log.js';
import { startService } from './start-service.js';

/**
 * Entry point of `npm start`. With WORKERS > 1 the primary process forks that many
 * servers sharing the port (each prepares the database under the migration lock) and
 * only supervises them. Configuration and start-up failures end with a message, not a trace.
 */
async function main(): Promise<void> {
  const config = readConfig();
  if (config.workers > 1 && cluster.isPrimary) return superviseWorkers(config);
  const logger = createLogger(config);
  const started = Date.now();
  const service = await startService(config, logger);
  const stop = async (signal: string) => {
    logger.info({ signal }, 'shutting down');
    await service.close();
    logger.info('stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));

  logger.info({ url: service.url }, 'listening; preparing the database');
  await service.ready;
  logger.info({ url: service.url, ms: Date.now() - started, pid: process.pid }, 'ready');
  if (cluster.isPrimary) printWelcome(service.url, Date.now() - started);
  else process.send?.({ ready: service.url });
}

function readConfig(): Config {
  try {
    return loadConfig();
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(2);
  }
}

function superviseWorkers(config: Config): void {
  const started = Date.now();
  let ready = 0;
  for (let i = 0; i < config.workers; i += 1) cluster.fork();
  cluster.on('message', (_worker, message: { ready?: string }) => {
    ready += 1;
    if (message.ready !== undefined && ready === config.workers) printWelcome(message.ready, Date.now() - started, config.workers);
  });
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    process.stderr.write(`worker ${worker.process.pid} exited (${signal ?? code}); starting another\n`);
    cluster.fork();
  });
  let stopping = false;
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

function printWelcome(url: string, ms: number, workers = 1): void {
  process.stderr.write(
    [
      '',
      `Metrics service ready at ${url} (${(ms / 1000).toFixed(1)} s${workers > 1 ? `, ${workers} workers` : ''})`,
      `  GraphiQL:  ${url}/graphql`,
      `  REST:      curl -H "x-api-key: $KEY" "${url}/v1/metrics/token-price-usd?project=ethereum&start_date=2025-01-01&end_date=2025-01-07"`,
      `  API docs:  ${url}/docs`,
      `  Readiness: ${url}/readyz`,
      '',
    ].join('\n'),
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`start-up failed: ${(error as Error).message}\n`);
  process.exit(1);
});
