import { pino, type Logger } from 'pino';
import type { Config } from './config.js';

/**
 * The service logger: JSON lines on stdout. The key header and anything that could
 * carry a key or SQL parameters is redacted before a line is written.
 */
export function createLogger(config: Pick<Config, 'logLevel'>, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level: config.logLevel,
      base: undefined,
      redact: { paths: ['req.headers["x-api-key"]', 'headers["x-api-key"]', '*.parameters', 'parameters'], censor: '[redacted]' },
    },
    destination as pino.DestinationStream | undefined,
  );
}
