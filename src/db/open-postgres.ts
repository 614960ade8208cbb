import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import postgres from 'postgres';
import { createStreamSlots, streamSlotsFor, type StreamSlots } from './stream-slots.js';
import {
  throwIfCancelled,
  type CancelSignal,
  type ColumnText,
  type Queryable,
  type RawReadOptions,
  type Store,
} from './store.js';

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
    // Arrays travel as literals (see toParameter), so the driver need not look up array types:
    // that lookup runs on a fresh connection and its failure would surface as an unhandled rejection.
    fetch_types: false,
    connect_timeout: options.connectTimeoutSeconds,
    // The driver's default waits up to 20 s between reconnects after an outage; cap it at 1 s
    // so service resumes about a second after the database is back.
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1) * (0.5 + Math.random() / 2),
    // Idle connections are kept until their lifetime ends (the driver's default, 30-60
    // minutes): closing them after a minute idle armed and cleared a timer around every
    // statement, 2-3 µs of each request (docs/performance.md).
    idle_timeout: 0,
    onnotice: () => {},
    connection: {
      application_name: 'metrics-service',
      statement_timeout: Math.round(options.statementTimeoutSeconds * 1000),
      // Dates leave as PostgreSQL's text (`day::text`), whose form is the session's DateStyle:
      // a server or database set to another ('SQL, DMY') made every answer's dates 30/06/2026.
      datestyle: 'ISO, YMD',
    },
  });
  const answerWithinMs = (options.connectTimeoutSeconds + options.statementTimeoutSeconds) * 1000;
  const unanswered = createUnansweredWatch(answerWithinMs);
  // A stream that finds every turn taken waits as long as a statement may wait for its answer.
  const streams = createStreamSlots(streamSlotsFor(options.poolSize), answerWithinMs);
  const over = (runner: postgres.Sql | postgres.TransactionSql): Queryable => ({
    // In a transaction a cancelled statement has aborted the transaction: nothing to run again.
    query: async <Row extends object>(text: string, params: readonly unknown[] = [], signal?: CancelSignal) =>
      runStatement<Row>(runner === sql ? unanswered : undefined, signal, () =>
        runner.unsafe(text, toParameters(params), { prepare: true }),
      ),
    exec: async (script) => {
      await runner.unsafe(script).simple();
    },
    copyCsv: async (table, columns, csv) => {
      const input = await runner
        .unsafe(`copy ${table} (${columns.join(', ')}) from stdin with (format csv)`)
        .writable();
      await pipeline(Readable.from(csv), input);
    },
  });
  const readRaw = (text: string, params: readonly unknown[], signal?: CancelSignal, options?: RawReadOptions) =>
    runStatement<ColumnText[]>(unanswered, signal, () =>
      sql.unsafe(text, toParameters(params, options), { prepare: true }).raw(),
    );
  return {
    kind: 'postgres',
    description: `PostgreSQL at ${describeUrl(options.url)}`,
    ...over(sql),
    streamRaw: async function* (
      text: string,
      params: readonly unknown[],
      batchRows: number,
      signal?: CancelSignal,
      options?: RawReadOptions,
    ) {
      const cursor = Number.isFinite(batchRows);
      // A cursor is never cancelled: when its reader leaves, the reader stops asking and the
      // transaction ends after the batch in hand, which frees the connection (each batch is
      // small and under the statement timeout). A cancel cannot be aimed at the cursor: it
      // reaches the server after that, when the connection already runs the next request's
      // statement, and cancelled that one instead (503s after clients left mid-answer).
      if (cursor) {
        throwIfCancelled(signal);
        // Before its first batch, a cursor stopped by a cancel meant for another statement
        // (see runStatement) starts again; after it, rows have gone out.
        for (let delivered = false, again = true; ; again = false) {
          try {
            const parameters = toParameters(params, options);
            const batches = fetchedBatches(sql, unanswered, streams, signal, text, parameters, batchRows);
            for await (const rows of batches) {
              delivered = true;
              yield rows;
            }
            return;
          } catch (error) {
            if (delivered || !again || signal?.aborted || !cancelledByRequest(error)) throw error;
          }
        }
      }
      yield await readRaw(text, params, signal, options);
    },
    queryRaw: readRaw,
    listen: (channel, onMessage, onState) => listenOn(options, channel, onMessage, onState),
    transaction: async (work) => (await sql.begin((tx) => work(over(tx)))) as Awaited<ReturnType<typeof work>>,
    close: () => {
      unanswered.close();
      return sql.end({ timeout: 5 });
    },
  };
}

/**
 * LISTEN on a connection of its own. postgres.js' `listen` reconnects by itself but does
 * not say when the connection is lost, and a cache that trusts notifications must stop
 * trusting them at that moment: so this one reports both edges, and listens again (every
 * second) until it is back. A connection cut off without a word (a network partition, a
 * frozen host) closes no socket for many minutes (TCP keepalive): notifications stop and
 * nothing says so, while the cache kept serving what other writers had changed. So the
 * connection is pinged every connect-plus-statement timeout, and one that leaves a ping
 * unanswered that long counts as lost until it answers again.
 */
async function listenOn(
  options: PostgresOptions,
  channel: string,
  onMessage: (payload: string) => void,
  onState?: (listening: boolean) => void,
): Promise<() => Promise<void>> {
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  let connected = false;
  let silent = false;
  let reported: boolean | undefined;
  /** Tells `onState` when listening starts or stops (and at every restart: what was missed meanwhile is unknown). */
  const report = (restarted = false) => {
    const listening = connected && !silent;
    if (listening === reported && !restarted) return;
    reported = listening;
    onState?.(listening);
  };
  // `onnotify` is the driver's own hook (its listen() uses it) but not in its types.
  const listener = postgres(options.url, {
    max: 1,
    idle_timeout: 0,
    max_lifetime: null,
    fetch_types: false,
    connect_timeout: options.connectTimeoutSeconds,
    onnotice: () => {},
    onnotify: (name: string, payload: string) => {
      if (name === channel) onMessage(payload);
    },
    onclose: () => {
      if (stopped) return;
      connected = false;
      report();
      again();
    },
    connection: { application_name: 'metrics-service listener' },
  } as postgres.Options<Record<string, never>>);
  const start = async () => {
    await listener.unsafe(`listen "${channel.replace(/"/g, '""')}"`);
    connected = true;
    silent = false;
    report(true);
  };
  const answerWithinMs = (options.connectTimeoutSeconds + options.statementTimeoutSeconds) * 1000;
  let pinging = false;
  const ping = setInterval(() => {
    if (pinging || !connected) return;
    pinging = true;
    const unanswered = setTimeout(() => {
      silent = true;
      report();
    }, answerWithinMs);
    void listener
      .unsafe('select 1')
      .then(
        () => true,
        () => false,
      )
      .then((answered) => {
        clearTimeout(unanswered);
        pinging = false;
        if (!answered || !silent || stopped) return;
        silent = false;
        report(true);
      });
  }, answerWithinMs);
  ping.unref();
  const again = () => {
    clearTimeout(retry);
    retry = setTimeout(() => void start().catch(() => again()), 1000);
    retry.unref();
  };
  await start();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    clearInterval(ping);
    await listener.end({ timeout: 1 });
  };
}

/** How long an abandoned statement may still finish on its own before it is cancelled. */
const CANCEL_GRACE_MS = 250;

/**
 * Cancels the statement on the server when `signal` aborts and it is still running
 * {@link CANCEL_GRACE_MS} later. PostgreSQL cancels whatever the connection runs when the
 * request arrives, so cancelling a statement that is about to finish could hit the next
 * one on that connection; the grace leaves short statements alone and stops long ones.
 */
function cancelOnAbort<Q extends { cancel(): void }>(
  query: Q,
  signal: CancelSignal | undefined,
  graceMs = CANCEL_GRACE_MS,
): { query: Q; done(): void } {
  if (signal === undefined) return { query, done: () => {} };
  let timer: NodeJS.Timeout | undefined;
  const onAbort = () => {
    if (graceMs === 0) query.cancel();
    else timer = setTimeout(() => query.cancel(), graceMs);
  };
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  return {
    query,
    done: () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    },
  };
}

/**
 * One statement, started by `start`, cancelled when `signal` aborts (cancelOnAbort), its
 * rows without holes (withoutHoles), and run once more when an autocommit statement was
 * stopped by a cancel request meant for another. PostgreSQL cancels whatever a connection
 * runs when the request arrives, and the driver sends statements of several requests down
 * one connection in turn: a cancel for an abandoned statement (see cancelOnAbort) can land
 * on the next one, another client's, which then failed with a 503. A statement whose own
 * client is still there was not cancelled by us, and an autocommit statement that was
 * cancelled changed nothing, so running it again is safe. The statement timeout is told
 * apart by its message. (One async function, not one per concern: it runs for every read.)
 */
async function runStatement<Row>(
  autocommit: UnansweredWatch | undefined,
  signal: CancelSignal | undefined,
  start: () => PromiseLike<unknown> & { cancel(): void },
): Promise<Row[]> {
  // A statement queued behind others (a loader's batch, a wait for the answer budget) may
  // come up after its client left: it is not sent at all.
  throwIfCancelled(signal);
  for (let again = autocommit !== undefined; ; again = false) {
    const guard = cancelOnAbort(start(), signal);
    try {
      const rows = autocommit === undefined ? await guard.query : await autocommit.watch(guard.query);
      return withoutHoles(rows as unknown as Row[]);
    } catch (error) {
      if (!again || signal?.aborted || !cancelledByRequest(error)) throw error;
    } finally {
      guard.done();
    }
  }
}

/** Gives up on statements left unanswered too long; see {@link createUnansweredWatch}. */
interface UnansweredWatch {
  /** `answer`, or an ETIMEDOUT failure once the server has left it unanswered for the limit. */
  watch<T>(answer: PromiseLike<T>): Promise<T>;
  close(): void;
}

/** How often statements waiting on the server are looked over: they are given up at most this late. */
const UNANSWERED_SWEEP_MS = 250;

/**
 * A server that does not answer at all (a frozen host, a network that drops packets) is
 * stopped by neither the statement timeout (the server's own) nor the connect timeout (the
 * connection is open): a request would wait until it answers again, however long. An
 * autocommit statement unanswered after `limitMs` (the connect and statement timeouts
 * together, so a slow one meets its 503 from the server first) fails as the database being
 * away does. One sweep for all rather than a timer per statement: arming and clearing one
 * around every statement cost 2-3 µs of each request (docs/performance.md), a set entry
 * about 0.2 µs. Its connection stays busy until the server answers; others take its place.
 */
function createUnansweredWatch(limitMs: number): UnansweredWatch {
  const waiting = new Set<{ since: number; fail: (error: Error) => void }>();
  const sweep = setInterval(() => {
    const late = Date.now() - limitMs;
    for (const entry of waiting) {
      if (entry.since > late) continue;
      waiting.delete(entry);
      entry.fail(Object.assign(new Error(`no answer within ${limitMs / 1000} s`), { code: 'ETIMEDOUT' }));
    }
  }, UNANSWERED_SWEEP_MS);
  sweep.unref();
  return {
    watch: (answer) =>
      new Promise((resolve, reject) => {
        const entry = { since: Date.now(), fail: reject };
        waiting.add(entry);
        answer.then(
          (rows) => {
            waiting.delete(entry);
            resolve(rows);
          },
          (error: unknown) => {
            waiting.delete(entry);
            reject(error);
          },
        );
      }),
    close: () => clearInterval(sweep),
  };
}

/**
 * A statement's rows, `batchRows` at a time, from a cursor declared in a read-only
 * transaction, which holds a turn of `streams` until it ends (see stream-slots.ts): each
 * FETCH is a statement of its own for PostgreSQL, under the statement
 * timeout and the watch over unanswered statements by itself, and the reader's waits
 * between batches are under neither. A cursor of the protocol's (an Execute with a row
 * limit) was one statement from its first batch to its last: a reader slower than the
 * statement timeout in all (a long export to a slow client) was cut off part-way. The
 * cursor is planned for all its rows, as a statement is, not for the first tenth.
 *
 * The transaction runs in postgres.js' `begin` callback (its `reserve` never resolves
 * on a connection it has to open), which fetches a batch each time the reader asks for
 * one. A reader that leaves, or gives up on a batch the server left unanswered, stops
 * asking: the transaction ends once the batch in hand comes, and frees its connection.
 */
async function* fetchedBatches(
  sql: postgres.Sql,
  unanswered: UnansweredWatch,
  streams: StreamSlots,
  signal: CancelSignal | undefined,
  text: string,
  params: postgres.ParameterOrJSON<never>[],
  batchRows: number,
): AsyncGenerator<ColumnText[][]> {
  const giveBack = await streams.take(signal);
  let asking: ((rows: ColumnText[][]) => void) | undefined;
  let stopped = false;
  let wake: ((more: boolean) => void) | undefined;
  const nextAsk = () =>
    new Promise<boolean>((resolve) => {
      if (stopped) resolve(false);
      else if (asking !== undefined) resolve(true);
      else wake = resolve;
    });
  const transaction = sql
    .begin('read only', async (tx) => {
      await tx.unsafe('set local cursor_tuple_fraction = 1');
      await tx.unsafe(`declare batches no scroll cursor for ${text}`, params, { prepare: true });
      while (await nextAsk()) {
        const rows = withoutHoles(
          (await tx.unsafe(`fetch ${batchRows} from batches`).raw()) as unknown as ColumnText[][],
        );
        const reader = asking!;
        asking = undefined;
        const last = rows.length < batchRows;
        reader(rows);
        if (last) return;
      }
    })
    .then(() => null); // ended without a batch for the reader
  transaction.catch(() => {}); // a failure reaches the reader through the race below, or nobody waits for it
  // The turn is given back when the connection is, not when the reader stops asking.
  transaction.then(giveBack, giveBack);
  try {
    for (;;) {
      const batch = new Promise<ColumnText[][]>((resolve) => {
        asking = resolve;
        wake?.(true);
        wake = undefined;
      });
      const rows = await unanswered.watch(Promise.race([batch, transaction]));
      if (rows === null) return;
      // Counted first: the reader empties the arrays it is given.
      const last = rows.length < batchRows;
      if (rows.length > 0) yield rows;
      if (last) return;
    }
  } finally {
    stopped = true;
    wake?.(false);
  }
}

/**
 * A result without the leading holes postgres.js (3.4.9) leaves in it when the statement
 * before it on the same connection failed part-way through its rows: the driver's row
 * counter is not reset then (porsager/postgres#1119, #1181), so every row is there but
 * written from a stale offset. A cancelled statement is such a failure; holes reached the
 * writer as missing rows.
 */
function withoutHoles<T>(rows: T[]): T[] {
  return rows.length === 0 || 0 in rows ? rows : rows.filter(() => true);
}

function cancelledByRequest(error: unknown): boolean {
  return (error as { code?: unknown }).code === '57014' && /user request/.test((error as Error).message);
}

/**
 * A statement's parameters as the driver takes them; reused ones are converted once (see
 * RawReadOptions). The driver copies what it is given and never changes it.
 */
function toParameters(params: readonly unknown[], options?: RawReadOptions): postgres.ParameterOrJSON<never>[] {
  if (options?.reusedParameters !== true) return params.map(toParameter);
  let converted = CONVERTED.get(params);
  if (converted === undefined) {
    converted = params.map(toParameter);
    CONVERTED.set(params, converted);
  }
  return converted;
}

const CONVERTED = new WeakMap<readonly unknown[], postgres.ParameterOrJSON<never>[]>();

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
