import type { Catalog } from '../catalog/load-catalog.js';
import { todayEpochDay } from '../dates.js';
import type { Store } from '../db/store.js';
import { loadProjectIds, projectKey, syncCatalog } from '../db/sync-catalog.js';
import { bulkLoadPoints, hasPoints, POINT_COLUMNS, upsertStagedPoints } from '../db/write-points.js';
import { generateSeries } from './generate-series.js';

export interface SeedOptions {
  years: number;
  /** The same seed and end day always give the same data. */
  seed?: number;
  /** Last day of the window as days since 1970-01-01; defaults to today (UTC). */
  lastDay?: number;
}

export interface SeedResult {
  series: number;
  points: number;
}

const DEFAULT_SEED = 20_240_101;

/**
 * Fills every metric × allowed slug with sample data over the last `years` years, in one
 * transaction (a failed seed leaves nothing half-written). Points are generated here and
 * loaded with COPY: straight into the point table when it is empty (a first start), else
 * through a staging table that replaces the points on the same days, so seeding twice
 * gives the same database.
 */
export async function seedDatabase(store: Store, catalog: Catalog, options: SeedOptions): Promise<SeedResult> {
  const lastDay = options.lastDay ?? todayEpochDay();
  const window = {
    firstDay: lastDay - Math.round(options.years * 365.25) + 1,
    lastDay,
    seed: options.seed ?? DEFAULT_SEED,
  };
  return store.transaction(async (tx) => {
    await syncCatalog(tx, catalog);
    const ids = await loadProjectIds(tx);
    const result = { series: 0, points: 0 };
    const csv = function* () {
      for (const metric of catalog.metrics) {
        for (const slug of metric.projects) {
          const projectId = ids.get(projectKey(metric.name, slug));
          if (projectId === undefined)
            throw new Error(`project ${metric.name}/${slug} is missing after the catalog sync`);
          const lines = generateSeries(metric, slug, window).map(
            (p) => `${projectId},${p.day},${p.value},${p.extra === null ? '' : csvField(JSON.stringify(p.extra))}\n`,
          );
          result.series += 1;
          result.points += lines.length;
          yield lines.join('');
        }
      }
    };
    const load = (table: string) => tx.copyCsv(table, POINT_COLUMNS, csv());
    await ((await hasPoints(tx)) ? upsertStagedPoints(tx, load) : bulkLoadPoints(tx, load));
    await tx.exec('analyze point');
    return result;
  });
}

// Private

function csvField(text: string): string {
  return `"${text.replaceAll('"', '""')}"`;
}
