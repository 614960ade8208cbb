import { guardStream, guardUnavailable } from '../api/unavailable.js';
import { IncompleteResultError } from '../db/classify-error.js';
import { seriesSql, type PointLayout } from '../db/series-sql.js';
import type { ColumnText, Queryable, Store } from '../db/store.js';
import type { PlannedProject, SeriesPlan } from './series-plan.js';

/** One project of an answer, undecoded: its slug, the dataset version, its points as a JSON array. */
export interface RawSeriesRow {
  slug: ColumnText;
  version: ColumnText;
  points: ColumnText;
}

/** One project of an answer as text, for GraphQL. */
export interface SeriesText {
  projectId: number;
  version: string;
  points: string;
}

/**
 * A plan's rows as bytes (text on the embedded store), `batchRows` projects per round
 * trip so a huge answer stays small in memory; when every project fits one batch, one
 * plain statement (no cursor, which costs about 15% more) reads them all. A store
 * failure becomes the 503 ApiError; a batch cut short by a cancelled statement is refused
 * rather than served as data.
 */
export async function* streamSeries(store: Store, plan: SeriesPlan, layout: PointLayout, batchRows: number, signal?: AbortSignal): AsyncGenerator<RawSeriesRow[]> {
  const batch = plan.projects.length <= batchRows ? Infinity : batchRows;
  for await (const rows of guardStream(store.streamRaw(seriesSql(layout), parameters(plan, plan.projects), batch, signal))) {
    yield rows.map((row) => {
      if (!Array.isArray(row)) throw new IncompleteResultError();
      const [, slug, version, points] = row as ColumnText[];
      return { slug: slug!, version: version!, points: points! };
    });
  }
}

/** The rows of some projects of a plan (a loader's batch), in one statement. */
export async function readSeries(db: Queryable, plan: SeriesPlan, projects: readonly PlannedProject[], layout: PointLayout, signal?: AbortSignal): Promise<SeriesText[]> {
  const rows = await guardUnavailable(() =>
    db.query<{ project_id: number; version: string; points: string }>(seriesSql(layout), parameters(plan, projects), signal));
  return rows.map((r) => ({ projectId: r.project_id, version: r.version, points: r.points }));
}

// Private

function parameters(plan: SeriesPlan, projects: readonly PlannedProject[]): unknown[] {
  return [projects.map((p) => p.id), plan.from, plan.to, projects.map((p) => p.slug)];
}
