import type { Queryable } from '../db/store.js';
import { readProfile, type ProfileFigures } from './read-profile.js';

/** The default and the bounds of a profile's trailing window, in days of data. */
export const DEFAULT_LOOKBACK_DAYS = 180;
export const MIN_LOOKBACK_DAYS = 7;
export const MAX_LOOKBACK_DAYS = 3650;

/** A metric's revision profile and when it was computed (ISO 8601 UTC). */
export interface RevisionProfile extends ProfileFigures {
  computedAt: string;
}

/**
 * Revision profiles kept per (metric, lookbackDays), so a read does not recompute one: a
 * profile is computed again on the first read after a write to its metric was announced,
 * and at most once a minute whatever the writes (a profile computed less than a minute ago
 * is served even after a write). While writes cannot be heard, every profile counts as
 * written to. Concurrent reads of a profile being computed share that computation.
 */
export interface RevisionProfiles {
  /** The profile of `metric`'s projects (`projectIds`), computed through `db` when the kept one is not good. */
  get(db: Queryable, metric: string, projectIds: readonly number[], lookbackDays: number): Promise<RevisionProfile>;
  /** Whether a read now would be served a kept profile (so cost no computation). */
  isKept(metric: string, lookbackDays: number): boolean;
  /** A write to this metric was announced. */
  written(metric: string): void;
  /** Listening for writes started (true) or stopped (false): either way, what was missed is unknown. */
  listening(listening: boolean): void;
}

/** The least time between two computations of one profile. */
export const RECOMPUTE_AFTER_MS = 60_000;
/** Profiles kept at most; the least recently computed goes first. */
const MAX_KEPT = 256;

export function createRevisionProfiles(clock: () => Date): RevisionProfiles {
  const kept = new Map<string, Entry>();
  let hearing = false;
  const good = (entry: Entry | undefined, now: number): boolean =>
    entry?.profile !== undefined && ((hearing && !entry.written) || now - entry.computedAt < RECOMPUTE_AFTER_MS);
  return {
    async get(db, metric, projectIds, lookbackDays) {
      const key = `${metric}|${lookbackDays}`;
      const entry = kept.get(key);
      if (entry !== undefined && good(entry, clock().getTime())) return entry.profile!;
      if (entry?.computing !== undefined) return entry.computing;
      const computing = (async () => {
        const started = clock().getTime();
        const figures = await readProfile(db, projectIds, lookbackDays);
        return { ...figures, computedAt: new Date(started).toISOString() };
      })();
      // A write announced from here on may not be in the figures: it marks the entry written again.
      const next: Entry = { metric, profile: entry?.profile, computedAt: entry?.computedAt ?? 0, written: false };
      next.computing = computing;
      kept.delete(key);
      kept.set(key, next);
      if (kept.size > MAX_KEPT) kept.delete(kept.keys().next().value!);
      try {
        const profile = await computing;
        next.profile = profile;
        next.computedAt = Date.parse(profile.computedAt);
        return profile;
      } catch (error) {
        next.written = true;
        throw error;
      } finally {
        next.computing = undefined;
      }
    },
    isKept: (metric, lookbackDays) => good(kept.get(`${metric}|${lookbackDays}`), clock().getTime()),
    written(metric) {
      for (const entry of kept.values()) if (entry.metric === metric) entry.written = true;
    },
    listening(listening) {
      hearing = listening;
      for (const entry of kept.values()) entry.written = true;
    },
  };
}

// Private

interface Entry {
  metric: string;
  profile: RevisionProfile | undefined;
  /** Epoch ms when the kept profile's computation began. */
  computedAt: number;
  /** A write was announced since the kept profile's computation began. */
  written: boolean;
  computing?: Promise<RevisionProfile> | undefined;
}
