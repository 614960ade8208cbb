/** A column value as the store sent it: bytes from the PostgreSQL driver, text from PGlite. */
export type ColumnText = string | Uint8Array;

/** A column value's bytes, without a copy when the store gave bytes. */
export function columnBytes(value: ColumnText): Buffer {
  if (typeof value === 'string') return Buffer.from(value, 'utf8');
  return Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}

/** A column value as a string, whether the store gave bytes or text. */
export function columnText(value: ColumnText): string {
  return typeof value === 'string' ? value : columnBytes(value).toString('utf8');
}

/**
 * What a statement watches to be cancelled: an AbortSignal, or anything as cheap that says
 * whether it has aborted and calls its `abort` listeners once when it does.
 */
export interface CancelSignal {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * Work that was not started because its {@link CancelSignal} had already aborted: whoever
 * asked for it has left, so nothing waits for the answer.
 */
export class CancelledError extends Error {
  constructor() {
    super('not started: whoever asked for it has left');
    this.name = 'CancelledError';
  }
}

/** Throws {@link CancelledError} when `signal` has aborted; before work that nobody would wait for. */
export function throwIfCancelled(signal: CancelSignal | undefined): void {
  if (signal?.aborted) throw new CancelledError();
}

/** Something SQL can be sent to: the store itself, or a transaction on it. */
export interface Queryable {
  /**
   * Runs one statement with `$n` parameters and returns its rows as the store typed them.
   * Aborting `signal` cancels the statement on the server (the embedded store cannot).
   */
  query<Row extends object>(text: string, params?: readonly unknown[], signal?: CancelSignal): Promise<Row[]>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(script: string): Promise<void>;
  /**
   * Loads CSV rows (no header) into `table`'s `columns` with COPY, the fastest way in
   * (much faster than inserting from parameter arrays). Table and column names are the
   * caller's constants, never input.
   */
  copyCsv(table: string, columns: readonly string[], csv: Iterable<string>): Promise<void>;
}

/** How a raw read may treat its parameters. */
export interface RawReadOptions {
  /**
   * The same parameter array, never changed, comes again with every repeat of its request
   * (a prepared request's): the store may convert it once and keep the conversion.
   */
  reusedParameters?: boolean;
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
   * Runs one statement and yields its rows as arrays of column texts, undecoded, for
   * answers that are passed through: bytes from the server store (no string is made of
   * them), text from PGlite. With a finite `batchRows` a cursor fetches that many rows
   * per round trip, so a large result never sits in memory whole; `Infinity` reads it in
   * one statement. Leaving the loop early stops the query; aborting `signal` cancels it.
   */
  streamRaw(
    text: string,
    params: readonly unknown[],
    batchRows: number,
    signal?: CancelSignal,
    options?: RawReadOptions,
  ): AsyncIterable<ColumnText[][]>;
  /** The same in one statement, all rows at once: what most answers need, without the iteration. */
  queryRaw(
    text: string,
    params: readonly unknown[],
    signal?: CancelSignal,
    options?: RawReadOptions,
  ): Promise<ColumnText[][]>;
  /**
   * Calls `onMessage` with the payload of every notification on `channel` (PostgreSQL's
   * LISTEN: delivered after the notifying transaction commits, whichever process wrote).
   * Resolves once listening, to a function that stops it. A server store listens on a
   * connection of its own and listens again after a reconnect; notifications sent while
   * it was away are lost, so they are hints, and the changes feed is the record.
   * `onState` is told `true` each time listening (re)starts (what was missed before is
   * unknown) and `false` as soon as the listening connection is lost.
   */
  listen(
    channel: string,
    onMessage: (payload: string) => void,
    onState?: (listening: boolean) => void,
  ): Promise<() => Promise<void>>;
  /** Runs `work` in one transaction; it commits when `work` resolves and rolls back when it throws. */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
