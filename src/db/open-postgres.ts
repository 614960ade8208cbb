import postgres from 'postgres';
import type { Queryable, Store } from './store.js';

export interface PostgresOptions {
  url: string;
  poolSize: number;
  statementTimeoutSeconds: number;
  connectTimeoutSeconds: number;
}

/** Opens a pool on a PostgreSQL server. Statements are prepared and cached per connection. */
export function openPostgres(options: PostgresOptions): Store {
  const sql = postgres(options.url, {
    max: options.poolSize,
    prepare: true,
    connect_timeout: options.connectTimeoutSeconds,
    idle_timeout: 60,
    onnotice: () => {},
    connection: {
      application_name: 'metrics-service',
      statement_timeout: Math.round(options.statementTimeoutSeconds * 1000),
    },
  });
  const over = (runner: postgres.Sql | postgres.TransactionSql): Queryable => ({
    query: async <Row extends object>(text: string, params: readonly unknown[] = []) =>
      (await runner.unsafe(text, params.map(toParameter), { prepare: true })) as unknown as Row[],
    exec: async (script) => {
      await runner.unsafe(script).simple();
    },
  });
  return {
    kind: 'postgres',
    description: `PostgreSQL at ${describeUrl(options.url)}`,
    ...over(sql),
    stream: <Row extends object>(text: string, params: readonly unknown[], batchRows: number) =>
      sql.unsafe(text, params.map(toParameter), { prepare: true }).cursor(batchRows) as unknown as AsyncIterable<Row[]>,
    transaction: async (work) => (await sql.begin((tx) => work(over(tx)))) as Awaited<ReturnType<typeof work>>,
    close: () => sql.end({ timeout: 5 }),
  };
}

/**
 * postgres.js guesses an array's type from its first element and gets booleans and
 * numbers wrong, so arrays travel as PostgreSQL array literals and the SQL casts them.
 */
function toParameter(value: unknown): postgres.ParameterOrJSON<never> {
  if (!Array.isArray(value)) return value as postgres.ParameterOrJSON<never>;
  const items = value.map((v) => (v === null || v === undefined ? 'NULL' : `"${String(v).replace(/[\\"]/g, '\\$&')}"`));
  return `{${items.join(',')}}`;
}

/** host:port/database of a connection URL, without user or password. */
export function describeUrl(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
}
