/**
 * `--import ./test/bench/service-modules.mjs`: loads every module the service loads at
 * start (its app, its start-up, their libraries: graphql-yoga, Pothos, zod, graphql,
 * postgres.js, pino, prom-client…, from `dist/`, so `npm run build` first) and runs none of
 * them, so the floor can be measured with the service's code and module-level data in its
 * process and nothing else of the service (paired-probe.ts, FLOOR2_ENV).
 */
await import('../../dist/src/app.js');
await import('../../dist/src/start/start-service.js');
await import('../../dist/src/graphql/yoga.js');
