import { guardStream, guardUnavailable } from '../api/unavailable.js';
import { IncompleteResultError } from '../db/classify-error.js';
import { seriesStatement, type PointLayout, type SeriesStatement } from '../db/series-sql.js';
import type { ColumnText, Queryable, Store } from '../db/store.js';
import type { PlannedProject, SeriesPlan } from './series-plan.js';

/** One project of an answer, undecoded: its slug, the dataset version, the batch's last write, its points' text. */
export interface RawSeriesRow {
  slug: ColumnText;
  version: ColumnText;
  /** ISO 8601 time of the newest write to any project of the batch; null when none was ever written. */
  updatedAt: ColumnText | null;
  points: ColumnText;
}

/** One project of an answer as text, for GraphQL. */
export interface SeriesText {
  projectId: number;
  version: string;
  points: string;
}

/** A plan's rows: all of them at once, or batches to stream. */
export type SeriesRows = { whole: RawSeriesRow[] } | { batches: AsyncIterable<RawSeriesRow[]> };

/**
 * A plan's rows as bytes (text on the embedded store). When every project fits one batch
 * of `batchRows`, one plain statement reads them all (no cursor, which costs about 15%
 * more, and no iteration); otherwise they stream `batchRows` projects per round trip so a
 * huge answer stays small in memory. A store failure becomes the 503 ApiError; a batch
 * cut short by a cancelled statement is refused rather than served as data.
 */
export async function readSeriesRows(store: Store, plan: SeriesPlan, layout: PointLayout, batchRows: number, signal?: AbortSignal): Promise<SeriesRows> {
  if (plan.projects.length > batchRows) return { batches: streamSeries(store, plan, layout, batchRows, signal) };
  const { text, parameters } = statementFor(plan, layout);
  return { whole: toRows(await guardUnavailable(() => store.queryRaw(text, parameters(query(plan, plan.projects)), signal))) };
}

/** A plan's rows, `batchRows` projects per round trip, whatever their number. */
export async function* streamSeries(store: Store, plan: SeriesPlan, layout: PointLayout, batchRows: number, signal?: AbortSignal): AsyncGenerator<RawSeriesRow[]> {
  const batch = plan.projects.length <= batchRows ? Infinity : batchRows;
  const { text, parameters } = statementFor(plan, layout);
  for await (const rows of guardStream(store.streamRaw(text, parameters(query(plan, plan.projects)), batch, signal))) yield toRows(rows);
}

/** The rows of some projects of a plan (a loader's batch), in one statement. */
export async function readSeries(db: Queryable, plan: SeriesPlan, projects: readonly PlannedProject[], layout: PointLayout, signal?: AbortSignal): Promise<SeriesText[]> {
  const { text, parameters } = statementFor(plan, layout);
  const rows = await guardUnavailable(() => db.query<{ project_id: number; version: string; points: string }>(text, parameters(query(plan, projects)), signal));
  return rows.map((r) => ({ projectId: r.project_id, version: r.version, points: r.points }));
}

// Private

function toRows(rows: ColumnText[][]): RawSeriesRow[] {
  return rows.map((row) => {
    if (!Array.isArray(row)) throw new IncompleteResultError();
    const [, slug, version, updatedAt, points] = row as (ColumnText | null)[];
    return { slug: slug!, version: version!, updatedAt: updatedAt ?? null, points: points! };
  });
}

function statementFor(plan: SeriesPlan, layout: PointLayout): SeriesStatement {
  return seriesStatement({ layout, options: plan.options, extraFields: plan.metric.extraFields, asOf: plan.asOf !== null });
}

function query(plan: SeriesPlan, projects: readonly PlannedProject[]) {
  return { projectIds: projects.map((p) => p.id), slugs: projects.map((p) => p.slug), from: plan.from, to: plan.to, metric: plan.metric.name, options: plan.options, asOf: plan.asOf };
}
