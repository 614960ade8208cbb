/** Something SQL can be sent to: the store itself, or a transaction on it. */
export interface Queryable {
  /**
   * Runs one statement with `$n` parameters and returns its rows as the store typed them.
   * Aborting `signal` cancels the statement on the server (the embedded store cannot).
   */
  query<Row extends object>(text: string, params?: readonly unknown[], signal?: AbortSignal): Promise<Row[]>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(script: string): Promise<void>;
}

/**
 * The one interface the data-access code talks to. Both implementations (a PostgreSQL
 * server through postgres.js, embedded PGlite) run the same SQL text.
 */
export interface Store extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /** A description safe to log: never a password. */
  readonly description: string;
  /**
   * Runs one statement and yields its rows in batches of about `batchRows`, so a large
   * result never sits in memory whole. Leaving the loop early stops the query.
   */
  stream<Row extends object>(text: string, params: readonly unknown[], batchRows: number, signal?: AbortSignal): AsyncIterable<Row[]>;
  /** Runs `work` in one transaction; it commits when `work` resolves and rolls back when it throws. */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
