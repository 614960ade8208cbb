import type { Logger } from 'pino';
import { addUsage, deleteUsageBefore, readUsage, type HourUsage } from '../db/usage-queries.js';
import type { Queryable } from '../db/store.js';

/** Hours `/v1/usage` lists, the current one last. */
export const USAGE_HOURS = 48;
/** UTC days `/v1/usage` lists, today last. */
export const USAGE_DAYS = 30;

/** A key's spend in one hour or day: requests charged and the units they were priced at. */
export interface UsagePeriod {
  units: number;
  requests: number;
}

/** What `/v1/usage` and GraphQL `usage` report of a key's spend, oldest first. */
export interface KeyUsage {
  hours: (UsagePeriod & { hour: string })[];
  days: (UsagePeriod & { date: string })[];
}

/**
 * Counts what each key spends, off the request path: a request adds to a sum in memory per
 * (key, UTC hour), and the sums are added to the `key_usage` table every few seconds, on
 * {@link UsageCounter.close} (shutdown), and before a key's usage is read. The upserts are
 * additive, so several instances on one database add up.
 */
export interface UsageCounter {
  /** Counts one request priced at `units` for `keyId` in the current hour; 0 units (a dry run, a refusal): nothing. */
  record(keyId: string, units: number): void;
  /** Writes what is counted so far; one write at a time, later calls wait for the one under way. */
  flush(): Promise<void>;
  /** A key's hours and days, with everything this process counted until now. */
  read(keyId: string): Promise<KeyUsage>;
  /** Stops the timer and writes what is left. */
  close(): Promise<void>;
}

export interface UsageCounterOptions {
  store: Queryable;
  clock: () => Date;
  logger: Logger;
  /** How often sums are written; default 5 s. */
  flushEveryMs?: number;
  /**
   * Sums (key × hour) held between writes at most: reaching it starts a write at once. While
   * a write is under way and another as many are held, further requests are not counted
   * (and a warning says how many were not), so memory stays bounded whatever the traffic.
   */
  maxEntries?: number;
}

export function createUsageCounter(options: UsageCounterOptions): UsageCounter {
  const { store, clock, logger } = options;
  const maxEntries = options.maxEntries ?? 10_000;
  let pending = new Map<string, HourUsage>();
  let writing: Promise<void> = Promise.resolve();
  let lost = 0;
  let prunedAt = 0;

  const writeOnce = async (): Promise<void> => {
    if (pending.size === 0) return;
    const rows = [...pending.values()];
    pending = new Map();
    try {
      await addUsage(store, rows);
      const now = clock().getTime();
      if (now - prunedAt >= HOUR_MS) {
        prunedAt = now;
        await deleteUsageBefore(store, startOfDay(now) - (USAGE_DAYS + 1) * DAY_MS);
      }
    } catch (error) {
      // Kept for the next write, as far as the bound allows: a database that is away loses no counts.
      for (const row of rows) add(row.keyId, row.hour, row.units, row.requests);
      logger.warn({ err: error }, 'could not write usage counts; they are kept for the next try');
    }
    if (lost > 0) {
      logger.warn({ requests: lost }, 'usage counts were over their bound in memory: some requests were not counted');
      lost = 0;
    }
  };
  const flush = (): Promise<void> => {
    writing = writing.then(writeOnce);
    return writing;
  };
  const add = (keyId: string, hour: number, units: number, requests: number) => {
    const id = `${hour}\u0000${keyId}`;
    const sum = pending.get(id);
    if (sum !== undefined) {
      sum.units += units;
      sum.requests += requests;
      return;
    }
    if (pending.size >= 2 * maxEntries) {
      lost += requests;
      return;
    }
    pending.set(id, { keyId, hour, units, requests });
    if (pending.size === maxEntries) void flush();
  };
  const timer = setInterval(() => void flush(), options.flushEveryMs ?? 5_000);
  timer.unref();

  return {
    record(keyId, units) {
      if (units <= 0) return;
      const now = clock().getTime();
      add(keyId, now - (now % HOUR_MS), units, 1);
    },
    flush,
    async read(keyId) {
      await flush();
      const now = clock().getTime();
      const today = startOfDay(now);
      const firstDay = today - (USAGE_DAYS - 1) * DAY_MS;
      const thisHour = now - (now % HOUR_MS);
      const firstHour = thisHour - (USAGE_HOURS - 1) * HOUR_MS;
      const hours = new Map<number, UsagePeriod>();
      const days = new Map<number, UsagePeriod>();
      for (const row of await readUsage(store, keyId, Math.min(firstDay, firstHour))) {
        if (row.hour >= firstHour && row.hour <= thisHour) addTo(hours, row.hour, row);
        if (row.hour >= firstDay && row.hour < today + DAY_MS) addTo(days, startOfDay(row.hour), row);
      }
      return {
        hours: Array.from({ length: USAGE_HOURS }, (_, i) => {
          const hour = firstHour + i * HOUR_MS;
          return { hour: new Date(hour).toISOString().replace('.000Z', 'Z'), ...(hours.get(hour) ?? NONE) };
        }),
        days: Array.from({ length: USAGE_DAYS }, (_, i) => {
          const day = firstDay + i * DAY_MS;
          return { date: new Date(day).toISOString().slice(0, 10), ...(days.get(day) ?? NONE) };
        }),
      };
    },
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}

// Private

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const NONE: UsagePeriod = Object.freeze({ units: 0, requests: 0 });

function startOfDay(ms: number): number {
  return ms - (((ms % DAY_MS) + DAY_MS) % DAY_MS);
}

function addTo(periods: Map<number, UsagePeriod>, at: number, row: UsagePeriod): void {
  const sum = periods.get(at) ?? { units: 0, requests: 0 };
  sum.units += row.units;
  sum.requests += row.requests;
  periods.set(at, sum);
}
