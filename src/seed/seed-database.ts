import type { Catalog, MetricDefinition } from '../catalog/load-catalog.js';
import { todayEpochDay } from '../dates.js';
import type { Store } from '../db/store.js';
import { loadProjectIds, projectKey, syncCatalog } from '../db/sync-catalog.js';
import { bulkLoadPoints, hasPoints, POINT_COLUMNS, upsertStagedPoints } from '../db/write-points.js';
import { generateSeries, type SamplePoint } from './generate-series.js';
import { sampleHistory } from './sample-history.js';

export interface SeedOptions {
  years: number;
  /** The same seed and end day always give the same data. */
  seed?: number;
  /** Last day of the window as days since 1970-01-01; defaults to today (UTC). */
  lastDay?: number;
  /**
   * Also write a revision history (see sample-history.ts) with every write before
   * `writtenBefore`: only into an empty store, where nothing is replaced.
   */
  history?: boolean;
  /** The instant (ms since the epoch) every sample write precedes; defaults to now. */
  writtenBefore?: number;
}

export interface SeedResult {
  series: number;
  points: number;
}

const DEFAULT_SEED = 20_240_101;

/**
 * Fills every metric × allowed slug with sample data over the last `years` years, in one
 * transaction (a failed seed leaves nothing half-written). Points are generated here and
 * loaded with COPY, one statement per metric (so no statement holds the whole load):
 * straight into the point table when it is empty (a first start), else through a staging
 * table that replaces the points on the same days, so seeding twice gives the same database.
 * With `history`, an empty store also gets each day's earlier values in point_history and
 * each point its write time (the changes feed starts after the load, as without it).
 */
export async function seedDatabase(store: Store, catalog: Catalog, options: SeedOptions): Promise<SeedResult> {
  const lastDay = options.lastDay ?? todayEpochDay();
  const window = {
    firstDay: lastDay - Math.round(options.years * 365.25) + 1,
    lastDay,
    seed: options.seed ?? DEFAULT_SEED,
  };
  const before = options.writtenBefore ?? Date.now();
  return store.transaction(async (tx) => {
    await syncCatalog(tx, catalog);
    const ids = await loadProjectIds(tx);
    const result = { series: 0, points: 0 };
    const withHistory = options.history === true && !(await hasPoints(tx));
    const series = function* (metric: MetricDefinition) {
      for (const slug of metric.projects) {
        const projectId = ids.get(projectKey(metric.name, slug));
        if (projectId === undefined)
          throw new Error(`project ${metric.name}/${slug} is missing after the catalog sync`);
        result.series += 1;
        const points = generateSeries(metric, slug, window);
        result.points += points.length;
        yield { projectId, points, slug };
      }
    };
    const historyLines: string[] = [];
    const lastWrites = new Map<number, number>();
    const load = async (table: string) => {
      for (const metric of catalog.metrics) {
        const csv = function* () {
          for (const { projectId, points, slug } of series(metric)) {
            if (!withHistory) {
              yield points.map((p) => `${pointLine(projectId, p)}\n`).join('');
              continue;
            }
            const days = sampleHistory(metric, slug, points, window.seed, before);
            // A restatement of an older day may be the newest write.
            let last = -Infinity;
            for (const { versions } of days) last = Math.max(last, versions.at(-1)!.writtenAt);
            if (days.length > 0) lastWrites.set(projectId, last);
            yield points
              .map((p, i) => `${pointLine(projectId, p)},${instant(days[i]!.versions.at(-1)!.writtenAt)}\n`)
              .join('');
            for (const [i, { day, versions }] of days.entries()) {
              const extra = points[i]!.extra === null ? '' : csvField(JSON.stringify(points[i]!.extra));
              for (let v = 0; v + 1 < versions.length; v += 1) {
                historyLines.push(
                  `${projectId},${day},${versions[v]!.value},${extra},` +
                    `${instant(versions[v]!.writtenAt)},${instant(versions[v + 1]!.writtenAt)}\n`,
                );
              }
            }
          }
        };
        await tx.copyCsv(table, withHistory ? [...POINT_COLUMNS, 'written_at'] : POINT_COLUMNS, csv());
        if (historyLines.length > 0) {
          await tx.copyCsv('point_history', HISTORY_COLUMNS, historyLines.splice(0));
        }
      }
    };
    // The history's keys are built once after its load, as the point table's are (bulkLoadPoints).
    if (withHistory)
      await tx.exec(
        'alter table point_history drop constraint point_history_pkey, drop constraint point_history_project_id_fkey',
      );
    await ((await hasPoints(tx)) ? upsertStagedPoints(tx, load) : bulkLoadPoints(tx, load));
    if (withHistory)
      await tx.exec(`alter table point_history add constraint point_history_pkey primary key (project_id, day, valid_from),
        add constraint point_history_project_id_fkey foreign key (project_id) references project (id)`);
    // Each series was last written when its newest write was made, not at this load.
    if (withHistory)
      await tx.query(
        `update project p set updated_at = w.last::timestamptz
         from unnest($1::integer[], $2::text[]) as w (id, last) where w.id = p.id`,
        [[...lastWrites.keys()], [...lastWrites.values()].map(instant)],
      );
    await tx.exec('analyze point');
    if (withHistory) await tx.exec('analyze point_history');
    return result;
  });
}

// Private

const HISTORY_COLUMNS = ['project_id', 'day', 'value', 'extra', 'valid_from', 'valid_to'] as const;

function pointLine(projectId: number, p: SamplePoint): string {
  return `${projectId},${p.day},${p.value},${p.extra === null ? '' : csvField(JSON.stringify(p.extra))}`;
}

/** An instant as PostgreSQL reads a timestamptz. */
function instant(ms: number): string {
  return new Date(ms).toISOString();
}

function csvField(text: string): string {
  return `"${text.replaceAll('"', '""')}"`;
}
