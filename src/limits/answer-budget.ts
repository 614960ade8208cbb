import { CancelledError, type CancelSignal } from '../db/store.js';

/**
 * The bytes of large answers being built at once in one process. GraphQL builds an answer
 * whole (the points' bytes as read, then the assembled answer: about twice the points),
 * so a few dozen clients asking for long histories at once could exhaust the process's
 * memory. A request that will build a large answer reserves its estimated size once,
 * before it builds anything, and waits, in arrival order, while the budget is spent: a
 * request that waited while holding bytes could wait on itself, and hold the line for
 * good. What is larger than the whole budget runs alone (callers refuse it first).
 * Small answers never wait.
 */
export interface AnswerBudget {
  /**
   * Resolves, once `bytes` fit, to the function that gives them back. A reservation whose
   * `signal` aborts while it waits leaves the queue and rejects with CancelledError: its
   * client has gone, and building its answer anyway would delay everyone queued behind it.
   */
  reserve(bytes: number, signal?: CancelSignal): Promise<() => void>;
  /** The whole budget: a caller refuses what asks for more, since it could never fit beside anything. */
  readonly totalBytes: number;
  /** Bytes reserved now. */
  readonly inUse: number;
  /** Reservations waiting for bytes now. */
  readonly waiting: number;
}

/** Points a process may be building at once for GraphQL answers: about twice that in memory at the peak. */
export const GRAPHQL_ANSWER_BUDGET_BYTES = 32 * 2 ** 20;

/** Answers estimated below this never reserve: they are most requests and cost little. */
export const SMALL_ANSWER_BYTES = 2 ** 20;

export function createAnswerBudget(totalBytes: number): AnswerBudget {
  let inUse = 0;
  const waiting: { bytes: number; grant: () => void }[] = [];
  const drain = () => {
    while (waiting.length > 0 && (inUse === 0 || inUse + waiting[0]!.bytes <= totalBytes)) {
      const next = waiting.shift()!;
      inUse += next.bytes;
      next.grant();
    }
  };
  return {
    reserve(requested, signal) {
      const bytes = Math.min(requested, totalBytes);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        inUse -= bytes;
        drain();
      };
      return new Promise((resolve, reject) => {
        if (signal?.aborted) return reject(new CancelledError());
        const leave = () => {
          const at = waiting.indexOf(waiter);
          if (at < 0) return;
          waiting.splice(at, 1);
          reject(new CancelledError());
          drain(); // the first in line may fit now that a larger one ahead of it has left
        };
        const waiter = {
          bytes,
          grant: () => {
            signal?.removeEventListener('abort', leave);
            resolve(release);
          },
        };
        waiting.push(waiter);
        signal?.addEventListener('abort', leave, { once: true });
        drain();
      });
    },
    totalBytes,
    get inUse() {
      return inUse;
    },
    get waiting() {
      return waiting.length;
    },
  };
}
