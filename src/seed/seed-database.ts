import type { Catalog } from '../catalog/load-catalog.js';
import { todayEpochDay } from '../dates.js';
import { loadProjectIds, projectKey, syncCatalog } from '../db/sync-catalog.js';
import type { Store } from '../db/store.js';
import { upsertPoints, type PointRow } from '../db/write-points.js';
import { generateSeries } from './generate-series.js';

export interface SeedOptions {
  years: number;
  /** The same seed and end day always give the same data. */
  seed?: number;
  /** Last day of the window; defaults to today (UTC). */
  lastDay?: number;
  onProgress?: (progress: SeedProgress) => void;
}

export interface SeedProgress {
  seriesDone: number;
  seriesTotal: number;
  points: number;
}

export const DEFAULT_SEED = 20_240_101;

/** Rows sent per statement: large enough to amortise round trips, small enough for PGlite's memory. */
const BATCH_ROWS = 20_000;

/**
 * Fills every metric x allowed slug with sample data over the last `years` years, in one
 * transaction (a failed seed leaves nothing half-written). Existing points for the same
 * days are replaced, so seeding twice gives the same database.
 */
export async function seedDatabase(store: Store, catalog: Catalog, options: SeedOptions): Promise<SeedProgress> {
  const lastDay = options.lastDay ?? todayEpochDay();
  const window = { firstDay: lastDay - Math.round(options.years * 365.25) + 1, lastDay, seed: options.seed ?? DEFAULT_SEED };
  const seriesTotal = catalog.metrics.reduce((n, m) => n + m.projects.length, 0);
  const progress: SeedProgress = { seriesDone: 0, seriesTotal, points: 0 };

  await store.transaction(async (tx) => {
    await syncCatalog(tx, catalog);
    const ids = await loadProjectIds(tx);
    let batch: PointRow[] = [];
    for (const metric of catalog.metrics) {
      for (const slug of metric.projects) {
        const projectId = ids.get(projectKey(metric.name, slug));
        if (projectId === undefined) throw new Error(`project ${metric.name}/${slug} is missing after the catalog sync`);
        for (const p of generateSeries(metric, slug, window)) {
          batch.push({ projectId, day: p.day, value: p.value, extra: p.extra === null ? null : JSON.stringify(p.extra) });
        }
        if (batch.length >= BATCH_ROWS) {
          await upsertPoints(tx, batch);
          progress.points += batch.length;
          batch = [];
        }
        progress.seriesDone += 1;
        options.onProgress?.({ ...progress });
      }
    }
    await upsertPoints(tx, batch);
    progress.points += batch.length;
  });
  return progress;
}
