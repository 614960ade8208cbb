import { removePoints, upsertPoints } from '../../src/db/write-points.js';
import type { Store } from '../../src/db/store.js';

/** A day's value, or its removal (null). */
export type DayWrites = Record<string, number | string | null>;

/**
 * Writes one project's days in one transaction stamped `at` (the write clock, migration
 * 0008), as an import at that instant would: no test sleeps to make write times differ.
 */
export async function writeAt(store: Store, at: string, projectId: number, days: DayWrites): Promise<void> {
  await store.transaction(async (tx) => {
    await tx.query(`select set_config('metrics.write_time', $1, true)`, [at]);
    const entries = Object.entries(days);
    await upsertPoints(
      tx,
      entries.flatMap(([day, value]) => (value === null ? [] : [{ projectId, day, value, extra: null }])),
    );
    await removePoints(
      tx,
      entries.flatMap(([day, value]) => (value === null ? [{ projectId, day }] : [])),
    );
  });
}
