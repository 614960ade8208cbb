import type { Logger } from 'pino';
import { isUnavailableError } from './classify-error.js';
import { describeUrl, openPostgres, type PostgresOptions } from './open-postgres.js';
import type { ColumnText, Store } from './store.js';

/** One replica as readiness reports it (never its password). */
export interface ReplicaState {
  replica: string;
  inUse: boolean;
  /** Seconds its replay trails the primary (0 when caught up); null when it cannot be asked. */
  lagSeconds: number | null;
  /** Why it is out of rotation. */
  reason?: string;
}

export interface ReadRouter {
  /** A store for data reads: a healthy replica's, round robin, else the primary's. Writes go to the primary. */
  readonly reads: Store;
  states(): ReplicaState[];
  /** Resolves once every replica in use has replayed what the primary has written so far (or left rotation). */
  caughtUp(): Promise<void>;
  close(): Promise<void>;
}

export interface ReplicaOptions extends Omit<PostgresOptions, 'url'> {
  urls: readonly string[];
  maxLagSeconds: number;
  /** How often each replica's health and lag are read. */
  checkEverySeconds: number;
}

/**
 * Reads from PostgreSQL streaming replicas. Every replica's lag is read every few seconds
 * against the primary's own WAL position and clock: caught up when it has replayed the
 * primary's current position, else the time since the primary stood where the replica
 * stands (see replayLag), so neither an idle primary nor one that wakes up after a while
 * makes a replica that keeps up look late. A replica that fails its
 * check or lags beyond the limit leaves rotation until a check finds it fit again, and a
 * read it fails for a connection reason is retried on the primary: a replica's fault is
 * never a client's 5xx. Each answer comes from one server, its data version (ETag)
 * included, so a client never pairs an old version with newer data or the reverse.
 */
export function createReadRouter(primary: Store, options: ReplicaOptions, logger: Logger): ReadRouter {
  const replicas = options.urls.map((url) => ({
    url,
    name: describeUrl(url),
    store: openPostgres({ ...options, url }),
    inUse: false,
    lagSeconds: null as number | null,
    reason: 'not checked yet' as string | undefined,
    /** A check that may put it back in rotation is under way: a write announced meanwhile waits for it too. */
    admitting: false,
  }));
  /**
   * The primary's WAL position at the latest write announced (or being announced). A replica
   * out of rotation then (stopped, failing, lagging) was not waited for, so it comes back
   * only once it has replayed that far: its lag alone can be within the limit while it still
   * lacks a write that subscribers were told of and the response cache now keeps.
   */
  let announced = '0/0';
  let next = 0;
  const pick = () => {
    const fit = replicas.filter((r) => r.inUse);
    if (fit.length === 0) return undefined;
    next = (next + 1) % fit.length;
    return fit[next]!;
  };
  const drop = (replica: (typeof replicas)[number], reason: string) => {
    if (replica.inUse) logger.warn({ replica: replica.name, reason }, 'replica out of rotation: reads go elsewhere');
    replica.inUse = false;
    replica.reason = reason;
  };
  /** Out of rotation for a read it failed: a server that cannot be asked has no known lag (not its last check's). */
  const dropFailed = (replica: (typeof replicas)[number], reason: string) => {
    replica.lagSeconds = null;
    drop(replica, reason);
  };

  /** The primary's position and clock at recent checks, oldest first: when it stood where a replica stands now. */
  const heads: PrimaryHead[] = [];
  const check = async (replica: (typeof replicas)[number], primaryHead: Promise<PrimaryHead>) => {
    replica.admitting = !replica.inUse;
    try {
      const head = await primaryHead;
      const mustReplay = announced;
      // A replica that does not answer fails this after the connect and statement timeouts, by its store's own watch.
      const [state] = await replica.store.query<{
        recovery: boolean;
        replay_lsn: string | null;
        unreplayed: string | null;
        replayed: number | null;
      }>(
        `select pg_is_in_recovery() as recovery, pg_last_wal_replay_lsn()::text as replay_lsn,
           pg_wal_lsn_diff($1::pg_lsn, pg_last_wal_replay_lsn())::text as unreplayed,
           extract(epoch from pg_last_xact_replay_timestamp())::float8 as replayed`,
        [mustReplay],
      );
      if (!state!.recovery) return drop(replica, 'not a standby (pg_is_in_recovery() is false)');
      const lag = replayLag(head, heads, state!.replay_lsn, state!.replayed);
      replica.lagSeconds = Math.round(lag * 10) / 10;
      if (lag > options.maxLagSeconds)
        return drop(replica, `lags ${replica.lagSeconds} s, more than ${options.maxLagSeconds} s`);
      if (!replica.inUse && Number(state!.unreplayed ?? 1) > 0) {
        replica.reason = 'has not yet replayed a write already announced';
        return;
      }
      if (!replica.inUse) logger.info({ replica: replica.name, lagSeconds: replica.lagSeconds }, 'replica in rotation');
      replica.inUse = true;
      replica.reason = undefined;
    } catch (error) {
      replica.lagSeconds = null;
      drop(replica, `check failed: ${(error as Error).message.slice(0, 120)}`);
    } finally {
      replica.admitting = false;
    }
  };
  /** One read of the primary's position and clock per round, shared by every replica's check. */
  const checkAll = () => {
    const head = primary
      .query<PrimaryHead>(
        'select pg_current_wal_lsn()::text as lsn, extract(epoch from clock_timestamp())::float8 as now',
      )
      .then((rows) => rows[0]!);
    // Kept before any check reads them; those older than the lag limit (and a check or two) tell nothing more.
    head.then(
      (sample) => {
        heads.push(sample);
        while (heads.length > 0 && heads[0]!.now < sample.now - options.maxLagSeconds - 2 * options.checkEverySeconds)
          heads.shift();
      },
      () => {},
    ); // each check reports the failure as its own
    return Promise.all(replicas.map((replica) => check(replica, head)));
  };
  const timer = setInterval(() => void checkAll(), options.checkEverySeconds * 1000);
  timer.unref();
  void checkAll();

  /**
   * Runs a read on a replica, and on the primary when there is none or it fails to answer.
   * A replica that does not answer at all (frozen, or a network that drops its packets)
   * fails the read after the connect and statement timeouts by its own store's watch over
   * unanswered statements (open-postgres.ts), as an unavailable error like any other.
   */
  async function routed<T>(read: (store: Store) => Promise<T>): Promise<T> {
    const replica = pick();
    if (replica === undefined) return read(primary);
    try {
      return await read(replica.store);
    } catch (error) {
      if (cancelledByRecovery(error)) return read(primary);
      if (!isUnavailableError(error)) throw error;
      dropFailed(replica, `a read failed: ${(error as Error).message.slice(0, 120)}`);
      return read(primary);
    }
  }

  const reads: Store = {
    ...primary,
    description: `${primary.description}, reads from ${replicas.length} replica(s)`,
    query: (text, params, signal) => routed((s) => s.query(text, params, signal)),
    queryRaw: (text, params, signal, options) => routed((s) => s.queryRaw(text, params, signal, options)),
    streamRaw: (text, params, batchRows, signal, options) =>
      streamRouted(pick(), primary, dropFailed, (s) => s.streamRaw(text, params, batchRows, signal, options)),
  };

  return {
    reads,
    states: () =>
      replicas.map((r) => ({
        replica: r.name,
        inUse: r.inUse,
        lagSeconds: r.lagSeconds,
        ...(r.reason === undefined ? {} : { reason: r.reason }),
      })),
    async caughtUp() {
      const [head] = await primary.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn');
      announced = head!.lsn;
      // Every replica in rotation, or being checked for it, is waited for until it has replayed
      // the write, leaves rotation (a check found it lagging or failing), or the lag limit
      // passes; a replica that does not answer at all is not waited for beyond that limit.
      const waitedFor = (replica: (typeof replicas)[number]) => replica.inUse || replica.admitting;
      await Promise.all(
        replicas.filter(waitedFor).map(async (replica) => {
          const deadline = Date.now() + options.maxLagSeconds * 1000;
          for (;;) {
            const asked = replica.store.query<{ behind: string }>(
              'select pg_wal_lsn_diff($1::pg_lsn, pg_last_wal_replay_lsn())::text as behind',
              [head!.lsn],
            );
            const [state] = await answerWithin(Math.max(0, deadline - Date.now()), asked).catch(() => [
              { behind: '1' },
            ]);
            if (Number(state!.behind) <= 0 || !waitedFor(replica)) return;
            if (Date.now() >= deadline)
              return drop(replica, `did not replay a write within ${options.maxLagSeconds} s`);
            await new Promise((r) => setTimeout(r, 20));
          }
        }),
      );
    },
    async close() {
      clearInterval(timer);
      await Promise.all(replicas.map((r) => r.store.close()));
    },
  };
}

// Private

/** The primary's WAL position (`X/Y`) and clock (seconds since the epoch) at one check. */
interface PrimaryHead {
  lsn: string;
  now: number;
}

/**
 * Seconds a replica that has replayed the WAL up to `replayLsn` trails the primary at
 * `head`: none once it has replayed the primary's position. Else the less of two bounds:
 * the time since the primary last stood at or before that position (the latest earlier
 * check that found it there), and the time since the last transaction the replica replayed
 * committed (`lastReplayedCommit`). The second alone would make a replica a moment behind
 * a write look as late as the primary had been idle, and take it out of rotation while it
 * keeps up.
 */
function replayLag(
  head: PrimaryHead,
  earlier: readonly PrimaryHead[],
  replayLsn: string | null,
  lastReplayedCommit: number | null,
): number {
  if (replayLsn !== null && lsnValue(replayLsn) >= lsnValue(head.lsn)) return 0;
  const sinceCommit = Math.max(0, head.now - (lastReplayedCommit ?? 0));
  if (replayLsn === null) return sinceCommit;
  const replayed = lsnValue(replayLsn);
  const stoodThere = earlier.findLast((sample) => sample.now <= head.now && lsnValue(sample.lsn) <= replayed);
  return stoodThere === undefined ? sinceCommit : Math.min(sinceCommit, Math.max(0, head.now - stoodThere.now));
}

/** A WAL position `X/Y` (two hexadecimal halves of a 64-bit offset) as a number: exact up to 8 PB of WAL. */
function lsnValue(lsn: string): number {
  const [high, low] = lsn.split('/');
  return Number.parseInt(high!, 16) * 2 ** 32 + Number.parseInt(low!, 16);
}

/** `answer`, or a failure once `ms` pass without it: a statement timeout cannot stop a server that does not answer. */
function answerWithin<T>(ms: number, answer: Promise<T>): Promise<T> {
  answer.catch(() => {}); // a late failure after the timeout is nobody's
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(Object.assign(new Error(`no answer within ${Math.round(ms / 100) / 10} s`), { code: 'ETIMEDOUT' })),
      ms,
    );
  });
  return Promise.race([answer, timeout]).finally(() => clearTimeout(timer));
}

/**
 * A stream from a replica, restarted on the primary when the replica fails before its first
 * rows. A replica that stops answering fails as any other: its store gives up on a batch
 * left unanswered past the connect and statement timeouts (open-postgres.ts), and after the
 * first rows the failure ends the stream.
 */
async function* streamRouted<R extends { name: string; store: Store }>(
  replica: R | undefined,
  primary: Store,
  drop: (replica: R, reason: string) => void,
  stream: (store: Store) => AsyncIterable<ColumnText[][]>,
): AsyncGenerator<ColumnText[][]> {
  if (replica === undefined) return yield* stream(primary);
  let started = false;
  try {
    for await (const rows of stream(replica.store)) {
      started = true;
      yield rows;
    }
  } catch (error) {
    if (started || !(isUnavailableError(error) || cancelledByRecovery(error))) throw error;
    if (!cancelledByRecovery(error)) drop(replica, `a read failed: ${(error as Error).message.slice(0, 120)}`);
    yield* stream(primary);
  }
}

/**
 * A standby cancels a read that stands in the way of replaying the primary's WAL ("canceling
 * statement due to conflict with recovery": a lock the primary took, rows its vacuum removed),
 * with SQLSTATE 40001 or 40P01 (57P04 when the database was dropped, which counts as the replica
 * being away). A read-only statement on a standby meets these codes for no other reason (its
 * message may be translated). The replica is fine, the read only met bad timing there: it runs
 * on the primary.
 */
function cancelledByRecovery(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '40001' || code === '40P01';
}
