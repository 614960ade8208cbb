import { loadConfig } from './config.js';
import { createLogger } from './log.js';
import { startService } from './start-service.js';

/** Entry point of `npm start`: configuration errors and start-up failures end the process with a message, not a trace. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(2);
  }
  const logger = createLogger(config);
  const started = Date.now();
  const service = await startService(config, logger);
  logger.info({ url: service.url, ms: Date.now() - started }, 'ready');
  process.stderr.write(
    [
      '',
      `Metrics service ready at ${service.url} (${((Date.now() - started) / 1000).toFixed(1)} s)`,
      `  GraphiQL:  ${service.url}/graphql`,
      `  REST:      curl -H "x-api-key: $KEY" "${service.url}/v1/metrics/token-price-usd?project=ethereum&start_date=2025-01-01&end_date=2025-01-07"`,
      `  API docs:  ${service.url}/docs`,
      `  Readiness: ${service.url}/readyz`,
      '',
    ].join('\n'),
  );
  const stop = async (signal: string) => {
    logger.info({ signal }, 'shutting down');
    await service.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`start-up failed: ${(error as Error).message}\n`);
  process.exit(1);
});
