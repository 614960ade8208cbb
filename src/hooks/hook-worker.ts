import type { Logger } from 'pino';
import type { Catalog } from '../catalog/load-catalog.js';
import type { Config } from '../config.js';
import type { ProjectDirectory } from '../db/project-directory.js';
import type { Store } from '../db/store.js';
import {
  claimHooks,
  dueDeliveries,
  lockHookState,
  queueDeliveries,
  recordDelivered,
  recordFailure,
  releaseAllHooks,
  releaseHook,
  secondsToNextDue,
  type DueDelivery,
  type HookState,
} from './delivery-queries.js';
import { groupDeliveries } from './group-deliveries.js';
import { readFeedWrites } from './hook-events.js';
import { checkLateRules } from './late-rule.js';
import { postDelivery } from './post-delivery.js';
import { retryDelaySeconds } from './retry-delay.js';
import { signedHeaders } from './hook-signing.js';

/** Deliveries by how their attempts ended, since start (`/metrics`). */
export interface DeliveryOutcomes {
  delivered: number;
  /** Attempts that failed and will be tried again. */
  retried: number;
  /** Deliveries given up after failing for HOOKS_FAIL_AFTER_HOURS. */
  failed: number;
}

/** The process's webhook deliverer. */
export interface HookWorker {
  /** Starts delivering (after migrations: the directory names project rows). */
  start(store: Store, directory: ProjectDirectory): Promise<void>;
  /** Looks for work now: called for every write announced, and after a hook is made or replayed. */
  wake(): void;
  /** Checks every late rule now (also done on a timer); resolves to the events queued. */
  checkLate(): Promise<number>;
  readonly outcomes: Readonly<DeliveryOutcomes>;
  /** Stops: attempts in flight are cut off (tried again later) and leases given back. */
  close(): Promise<void>;
}

export interface HookWorkerLimits {
  /** Hooks this process delivers to at once. */
  concurrency: number;
  /** How long a claimed hook stays this process's without a word from it. */
  leaseSeconds: number;
  timeoutMs: number;
  maxResponseBytes: number;
  /** How often late rules are checked. */
  lateCheckMs: number;
  /** The longest wait between looks for work when no write is announced. */
  safetyPollMs: number;
}

export const HOOK_WORKER_LIMITS: HookWorkerLimits = {
  concurrency: 8,
  leaseSeconds: 30,
  timeoutMs: 10_000,
  maxResponseBytes: 64 * 1024,
  lateCheckMs: 30_000,
  safetyPollMs: 5_000,
};

/** How long a hook whose work failed is left alone. */
const ERROR_PAUSE_SECONDS = 5;
/** Due deliveries read at once, then sent one after the other. */
const DUE_BATCH = 100;
/** Changes read from the log in one step. */
const WINDOW = 5_000;
/** Deliveries a hook may have waiting before its position stops moving: a dead receiver's queue is bounded. */
export const MAX_PENDING = 10_000;

/**
 * Turns the change log into each hook's deliveries and sends them: wakes on every write
 * announced (and on a slow safety poll, and when a retry falls due), leases hooks that
 * have work (several instances share them, see claimHooks), and for each, in order,
 * extends its queue from the log and posts its oldest due delivery until the queue is
 * empty or a retry must wait.
 */
export function createHookWorker(
  parts: { catalog: Catalog; config: Config; logger: Logger; clock: () => Date },
  limits: HookWorkerLimits = HOOK_WORKER_LIMITS,
): HookWorker {
  const { config, logger } = parts;
  const outcomes: DeliveryOutcomes = { delivered: 0, retried: 0, failed: 0 };
  const active = new Map<string, Promise<unknown>>();
  const stop = new AbortController();
  let store: Store | undefined;
  let directory: ProjectDirectory | undefined;
  let rounding = false;
  let again = false;
  let poll: NodeJS.Timeout | undefined;
  let lateTimer: NodeJS.Timeout | undefined;
  const failAfterSeconds = config.hooksFailAfterHours * 3600;

  const wake = () => {
    if (store === undefined || stop.signal.aborted) return;
    if (rounding) {
      again = true;
      return;
    }
    void round(store);
  };

  const round = async (db: Store) => {
    rounding = true;
    try {
      do {
        again = false;
        const free = limits.concurrency - active.size;
        if (free <= 0) break;
        for (const id of await claimHooks(db, free, limits.leaseSeconds)) {
          const work = serve(db, id).then(
            (progressed) => progressed,
            (error: unknown) => {
              logger.warn({ err: error, hook: id }, 'webhook worker failed; the hook is tried again later');
              return false;
            },
          );
          active.set(id, work);
          void work.then((progressed) => {
            active.delete(id);
            if (progressed) wake();
          });
        }
      } while (again && !stop.signal.aborted);
      const next = await secondsToNextDue(db);
      schedule(next === undefined ? limits.safetyPollMs : Math.min(limits.safetyPollMs, next * 1000 + 5));
    } catch (error) {
      logger.warn({ err: error }, 'webhook worker could not look for work; trying again shortly');
      schedule(limits.safetyPollMs);
    } finally {
      rounding = false;
    }
    if (again) wake();
  };

  const schedule = (ms: number) => {
    clearTimeout(poll);
    if (stop.signal.aborted) return;
    poll = setTimeout(wake, ms);
    poll.unref();
  };

  /** Works on one leased hook; resolves to whether it moved anything. */
  const serve = async (db: Store, id: string): Promise<boolean> => {
    let progressed = false;
    let failed = true;
    try {
      let hook: HookState | undefined;
      let waiting = false;
      serving: for (;;) {
        if (stop.signal.aborted) break;
        const due = hook === undefined ? [] : await dueDeliveries(db, id, DUE_BATCH);
        if (due.length === 0) {
          const extended = await extend(db, id);
          hook = extended.hook;
          if (hook === undefined) break;
          if (extended.queued > 0 || extended.moved) progressed = true;
          if (extended.queued === 0 && !extended.more && waiting) break;
          // Nothing was due before the log was read: once more, then done unless more came.
          waiting = extended.queued === 0 && !extended.more;
          continue;
        }
        waiting = false;
        for (const delivery of due) {
          if (stop.signal.aborted) break serving;
          const done = await attempt(db, hook!, delivery);
          if (done === undefined) break serving; // cut off by shutdown: tried again later
          progressed = true;
          if (!done) break serving; // waits for its retry, and so do the deliveries behind it
        }
      }
      failed = false;
    } finally {
      // A hook whose work failed (the database, say) rests a while rather than being claimed again at once.
      await releaseHook(db, id, failed ? ERROR_PAUSE_SECONDS : 0).catch(() => {});
    }
    return progressed;
  };

  /** Adds deliveries for the next slice of the log after the hook's position, in one transaction. */
  const extend = (db: Store, id: string) =>
    db.transaction(async (tx) => {
      const hook = await lockHookState(tx, id);
      if (hook === undefined || hook.pending >= MAX_PENDING || BigInt(hook.afterSeq) >= BigInt(hook.lastSeq))
        return { hook, queued: 0, moved: false, more: false };
      const last = BigInt(hook.lastSeq);
      const through = BigInt(hook.afterSeq) + BigInt(WINDOW) < last ? BigInt(hook.afterSeq) + BigInt(WINDOW) : last;
      const wantsDayBefore = hook.rules.some((rule) => rule.type === 'threshold');
      const writes = await readFeedWrites(tx, hook.afterSeq, String(through), hook.filter, wantsDayBefore);
      const deliveries = groupDeliveries(hook.rules, writes);
      await queueDeliveries(tx, id, deliveries, String(through));
      return { hook, queued: deliveries.length, moved: true, more: through < last };
    });

  /** One attempt; true: delivered or given up, false: to be retried, undefined: cut off by shutdown. */
  const attempt = async (db: Store, hook: HookState, delivery: DueDelivery): Promise<boolean | undefined> => {
    const body = `{"hook":"${hook.id}","cursor":"${delivery.cursor}","events":${delivery.events}}`;
    const result = await postDelivery(hook.url, body, signedHeaders(hook.secret, delivery.id, body, new Date()), {
      allowPrivate: config.hooksAllowPrivate,
      timeoutMs: limits.timeoutMs,
      maxResponseBytes: limits.maxResponseBytes,
      signal: stop.signal,
    });
    if (stop.signal.aborted && !('status' in result)) return undefined;
    if ('status' in result && result.status >= 200 && result.status < 300) {
      await recordDelivered(db, delivery.seq, result.status, hook.id, limits.leaseSeconds);
      outcomes.delivered += 1;
      return true;
    }
    const failed = await recordFailure(
      db,
      delivery.seq,
      'status' in result ? { status: result.status, error: null } : { status: null, error: result.error },
      retryDelaySeconds(config.hooksRetryBaseSeconds, delivery.attempts + 1),
      failAfterSeconds,
    );
    if (failed) outcomes.failed += 1;
    else outcomes.retried += 1;
    logger.info(
      { hook: hook.id, delivery: delivery.id, attempt: delivery.attempts + 1, ...result, failed },
      failed ? 'webhook delivery failed for good' : 'webhook delivery failed; it will be tried again',
    );
    return failed;
  };

  const checkLate = async (): Promise<number> => {
    if (store === undefined || directory === undefined || stop.signal.aborted) return 0;
    const db = store;
    const hooks = await db.query<{ id: string }>(
      `select id from hook where active and rules @> '[{"type":"late"}]'::jsonb order by id`,
    );
    let queued = 0;
    for (const { id } of hooks) {
      queued += await db.transaction(async (tx) => {
        const hook = await lockHookState(tx, id);
        if (hook === undefined) return 0;
        return checkLateRules(tx, hook, parts.catalog, directory!, parts.clock());
      });
    }
    if (queued > 0) wake();
    return queued;
  };

  return {
    async start(opened, names) {
      if (store !== undefined) return;
      if (opened.kind === 'pglite') await releaseAllHooks(opened);
      store = opened;
      directory = names;
      lateTimer = setInterval(() => {
        checkLate().catch((error: unknown) => logger.warn({ err: error }, 'could not check late rules'));
      }, limits.lateCheckMs);
      lateTimer.unref();
      void checkLate().catch((error: unknown) => logger.warn({ err: error }, 'could not check late rules'));
      wake();
    },
    wake,
    checkLate,
    outcomes,
    async close() {
      stop.abort();
      clearTimeout(poll);
      clearInterval(lateTimer);
      await Promise.all(active.values());
    },
  };
}
