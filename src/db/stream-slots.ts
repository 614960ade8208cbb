import { CancelledError, type CancelSignal } from './store.js';

/**
 * Turns for streamed reads, each of which keeps a pooled connection from its first batch to
 * its last, however slowly its client reads (or while it reads nothing, up to the stall
 * limit). Only `count` run at once, so streams never hold the whole pool: short reads keep
 * the rest and are answered at their usual pace while any number of streams wait or stall.
 * Only a stream with a turn holds a batch in memory, so what stalled clients hold is bounded
 * too. Turns are given in arrival order.
 */
export interface StreamSlots {
  /**
   * Resolves, once a turn is free, to the function that gives it back (call it once). Rejects
   * with {@link CancelledError} when `signal` aborts first, and with an ETIMEDOUT error (the
   * database too busy: a 503) after `waitMs`.
   */
  take(signal?: CancelSignal): Promise<() => void>;
  /** Streams holding a turn now. */
  readonly inUse: number;
  /** Streams waiting for one. */
  readonly waiting: number;
}

/** The turns of a pool of `poolSize` connections: half of it, at least one. */
export function streamSlotsFor(poolSize: number): number {
  return Math.max(1, Math.floor(poolSize / 2));
}

/** `count` turns; a stream waits at most `waitMs` for one. */
export function createStreamSlots(count: number, waitMs: number): StreamSlots {
  let inUse = 0;
  const queue: Waiter[] = [];
  const giveBack = () => {
    const next = queue.shift();
    if (next === undefined) inUse -= 1;
    else next.grant();
  };
  const release = () => {
    let given = false;
    return () => {
      if (given) return;
      given = true;
      giveBack();
    };
  };
  return {
    get inUse() {
      return inUse;
    },
    get waiting() {
      return queue.length;
    },
    take(signal) {
      if (signal?.aborted) return Promise.reject(new CancelledError());
      if (inUse < count && queue.length === 0) {
        inUse += 1;
        return Promise.resolve(release());
      }
      return new Promise((resolve, reject) => {
        const leave = (error: Error) => {
          const at = queue.indexOf(waiter);
          if (at >= 0) queue.splice(at, 1);
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        };
        const onAbort = () => leave(new CancelledError());
        const timer = setTimeout(() => {
          const error = new Error(`no turn for a streamed read within ${waitMs / 1000} s`);
          leave(Object.assign(error, { code: 'ETIMEDOUT' }));
        }, waitMs);
        const waiter: Waiter = {
          grant: () => {
            clearTimeout(timer);
            signal?.removeEventListener('abort', onAbort);
            resolve(release());
          },
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        queue.push(waiter);
      });
    },
  };
}

// Private

interface Waiter {
  /** Hands the turn of a stream that ended to this waiter (`inUse` stays as it is). */
  grant(): void;
}
