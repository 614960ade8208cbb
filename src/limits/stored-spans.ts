import type { Logger } from 'pino';
import { toEpochDay } from '../dates.js';
import { readStoredSpans, type StoredSpanRecord } from '../db/read-coverage.js';
import type { Queryable } from '../db/store.js';
import { projectKey } from '../db/sync-catalog.js';
import type { StoredSpan } from './request-cost.js';

/**
 * Every series' first and last stored day, kept in memory so that a request is priced by
 * what it will read (`priceRequest`) without a query of its own. An omitted start reads a
 * series from its first stored day, so a point at a mistyped year (0001-01-01) would
 * otherwise make a cheap request build a huge answer.
 *
 * Every series is read when listening for writes starts, and again whenever it restarts
 * (writes announced meanwhile were missed); a series whose write is announced is read
 * again alone. Reads run one at a time in the background: until one ends, a series is
 * priced by what was read before (the assumed span, before the first read). Each series
 * costs two index probes.
 */
export interface StoredSpans {
  /** The series' first and last stored day; undefined when it has none (or none was read yet). */
  of(metric: string, slug: string): StoredSpan | undefined;
  /** Changes whenever a read changed a span: prices kept from before are made again. */
  readonly generation: number;
  /** Listening for writes has started (true) or stopped (false); each start reads every series again. */
  listening(listening: boolean): void;
  /** A write to this series was announced: its span is read again. */
  written(metric: string, slug: string): void;
  /**
   * Resolves once every read asked for so far has ended (a failed read keeps the spans read before,
   * and says so in the log).
   */
  settled(): Promise<void>;
}

export function createStoredSpans(db: Queryable, logger: Logger): StoredSpans {
  let spans = new Map<string, StoredSpan>();
  let generation = 0;
  let wasListening = false;
  let allPending = false;
  let pending = new Map<string, { metric: string; slug: string }>();
  let running: Promise<void> | undefined;

  /** Reads what is pending, in turns, until nothing is. */
  const run = () => {
    running ??= (async () => {
      try {
        while (allPending || pending.size > 0) {
          const all = allPending;
          const some = [...pending.values()];
          allPending = false;
          pending = new Map();
          await readSpans(all ? undefined : some).catch((error: unknown) =>
            logger.warn({ err: error }, "could not read the series' stored days; prices use the ones read before"),
          );
        }
      } finally {
        running = undefined;
      }
    })();
  };

  const readSpans = async (only: { metric: string; slug: string }[] | undefined) => {
    const rows = await readStoredSpans(db, only);
    const next = only === undefined ? new Map<string, StoredSpan>() : new Map(spans);
    for (const row of rows) setSpan(next, row);
    if (sameSpans(spans, next)) return;
    spans = next;
    generation += 1;
  };

  return {
    of: (metric, slug) => spans.get(projectKey(metric, slug)),
    get generation() {
      return generation;
    },
    listening(listening) {
      if (listening && !wasListening) {
        allPending = true;
        run();
      }
      wasListening = listening;
    },
    written(metric, slug) {
      pending.set(projectKey(metric, slug), { metric, slug });
      run();
    },
    settled: async () => {
      while (running !== undefined) await running;
    },
  };
}

// Private

function setSpan(spans: Map<string, StoredSpan>, row: StoredSpanRecord): void {
  const key = projectKey(row.metric, row.slug);
  if (row.first === null || row.last === null) spans.delete(key);
  else spans.set(key, { first: toEpochDay(row.first), last: toEpochDay(row.last) });
}

function sameSpans(a: ReadonlyMap<string, StoredSpan>, b: ReadonlyMap<string, StoredSpan>): boolean {
  if (a.size !== b.size) return false;
  for (const [key, span] of a) {
    const other = b.get(key);
    if (other === undefined || other.first !== span.first || other.last !== span.last) return false;
  }
  return true;
}
