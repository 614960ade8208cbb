import type { Config } from '../config.js';
import type { ServiceState } from '../services.js';

/** What the welcome tells of the data: an example range, and whether a key must be made first. */
export type WelcomeFacts = Pick<ServiceState, 'example' | 'keyless'>;

/**
 * The lines a person sees once the server is ready: where everything is (no link to a
 * page turned off), a request that returns data, and, on a PostgreSQL server with no key
 * yet, how to make one. Printed once, by the primary when there are workers.
 */
export function printWelcome(
  url: string,
  ms: number,
  { example, keyless }: WelcomeFacts,
  config: Pick<Config, 'workers' | 'graphiql' | 'explorer'>,
): void {
  const { workers } = config;
  const range = example === undefined ? '' : `&start_date=${example.from}&end_date=${example.to}`;
  process.stderr.write(
    [
      '',
      `Metrics service ready at ${url} (${(ms / 1000).toFixed(1)} s${workers > 1 ? `, ${workers} workers` : ''})`,
      ...(config.graphiql ? [`  GraphiQL:  ${url}/graphql   (type your key into its Headers tab)`] : []),
      ...(config.explorer ? [`  Explorer:  ${url}/explore   (charts; it asks for your key)`] : []),
      `  REST:      curl -H "x-api-key: $KEY" "${url}/v1/metrics/token-price-usd?project=ethereum${range}"`,
      `  API docs:  ${url}/docs`,
      `  Readiness: ${url}/readyz`,
      ...(keyless
        ? ['', 'No API key exists yet: make one with  npm run keys -- create --name NAME  (it prints the key once).']
        : []),
      '',
    ].join('\n'),
  );
}
