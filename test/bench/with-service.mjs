/**
 * `--import ./test/bench/with-service.mjs`: starts the whole service (from `dist/`, so
 * `npm run build` first) on a port of its own in this process and leaves it idle, so the
 * floor can be measured beside a live service's pools, timers, schema and state
 * (paired-probe.ts, FLOOR2_ENV). Reads its configuration from the environment, as the
 * service does.
 */
import { loadConfig } from '../../dist/src/config.js';
import { createLogger } from '../../dist/src/log.js';
import { startService } from '../../dist/src/start/start-service.js';

const config = loadConfig();
const service = await startService(config, createLogger(config));
await service.ready;
process.stderr.write(`idle service ready at ${service.url}\n`);
