import { guardStream, guardUnavailable } from '../api/unavailable.js';
import { IncompleteResultError } from '../db/classify-error.js';
import { seriesStatement, type PointLayout, type SeriesStatement } from './series-sql.js';
import type { CancelSignal, ColumnText, Store } from '../db/store.js';
import type { PlannedProject, SeriesPlan } from './series-plan.js';

/**
 * One project of an answer, undecoded: its id and slug, the dataset version, the batch's last write, its points'
 * text.
 */
export interface RawSeriesRow {
  projectId: ColumnText;
  slug: ColumnText;
  version: ColumnText;
  /** ISO 8601 time of the newest write to any project of the batch; null when none was ever written. */
  updatedAt: ColumnText | null;
  points: ColumnText;
}

/** One project of an answer for GraphQL: its points as the database's bytes (text on the embedded store). */
export interface SeriesText {
  projectId: number;
  points: ColumnText;
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
export async function readSeriesRows(
  store: Store,
  plan: SeriesPlan,
  layout: PointLayout,
  batchRows: number,
  signal?: CancelSignal,
): Promise<SeriesRows> {
  if (plan.projects.length > batchRows) return { batches: streamSeries(store, plan, layout, batchRows, signal) };
  const { text, parameters, reused } = wholePlanStatement(plan, layout);
  return {
    whole: await guardUnavailable(async () =>
      toRows(await store.queryRaw(text, parameters, signal, { reusedParameters: reused })),
    ),
  };
}

/** A plan's rows, `batchRows` projects per round trip, whatever their number. */
export async function* streamSeries(
  store: Store,
  plan: SeriesPlan,
  layout: PointLayout,
  batchRows: number,
  signal?: CancelSignal,
): AsyncGenerator<RawSeriesRow[]> {
  const batch = plan.projects.length <= batchRows ? Infinity : batchRows;
  const { text, parameters, reused } = wholePlanStatement(plan, layout);
  // Rows are checked inside the guard, so a batch cut short is a 503 like any store failure.
  yield* guardStream(checkedBatches(store.streamRaw(text, parameters, batch, signal, { reusedParameters: reused })));
}

/**
 * The rows of some projects of a plan (a loader's batch), in one statement. The points
 * stay bytes: GraphQL writes them into its answer as they came (see splice.ts).
 */
export async function readSeries(
  db: Pick<Store, 'queryRaw'>,
  plan: SeriesPlan,
  projects: readonly PlannedProject[],
  layout: PointLayout,
  signal?: CancelSignal,
): Promise<SeriesText[]> {
  const { text, parameters } = planStatement(plan, layout, projects);
  // String(): the id is bytes from PostgreSQL, but PGlite gives integer columns already parsed.
  return guardUnavailable(async () =>
    toRows(await db.queryRaw(text, parameters, signal)).map((r) => ({
      projectId: Number(String(r.projectId)),
      points: r.points,
    })),
  );
}

// Private

async function* checkedBatches(batches: AsyncIterable<ColumnText[][]>): AsyncGenerator<RawSeriesRow[]> {
  for await (const rows of batches) yield toRows(rows);
}

/**
 * A batch's rows; a batch with a row missing is refused. A statement cancelled in the
 * middle of a cursor batch leaves holes in the driver's array, which `map` would carry
 * through to the writer as undefined rows, so every index is read.
 *
 * The driver's arrays are emptied once read: one that dies in the old generation would
 * otherwise keep its columns' socket buffer alive until a full collection.
 */
function toRows(rows: ColumnText[][]): RawSeriesRow[] {
  const result: RawSeriesRow[] = [];
  for (let i = 0; i < rows.length; i += 1) {
    const row = rows[i];
    if (!Array.isArray(row)) throw new IncompleteResultError();
    const [projectId, slug, version, updatedAt, points] = row as (ColumnText | null)[];
    result.push({
      projectId: projectId!,
      slug: slug!,
      version: version!,
      updatedAt: updatedAt ?? null,
      points: points!,
    });
    row.length = 0;
  }
  rows.length = 0;
  return result;
}

/**
 * The statement and parameters that read all of a plan's projects, made once per plan and
 * named layout (GraphQL's field lists are made afresh): a repeated REST request brings the
 * same plan (src/rest/prepared-requests.ts), so its parameters are `reused` and the store
 * may convert them once too.
 */
function wholePlanStatement(plan: SeriesPlan, layout: PointLayout): WholePlanStatement {
  if (typeof layout !== 'string') return { ...planStatement(plan, layout, plan.projects), reused: false };
  let byLayout = WHOLE_PLAN_STATEMENTS.get(plan);
  if (byLayout === undefined) {
    byLayout = new Map();
    WHOLE_PLAN_STATEMENTS.set(plan, byLayout);
  }
  let made = byLayout.get(layout);
  if (made === undefined) {
    const { text, parameters } = planStatement(plan, layout, plan.projects);
    made = { text, parameters: Object.freeze(parameters), reused: true };
    byLayout.set(layout, made);
  }
  return made;
}

interface WholePlanStatement {
  text: string;
  parameters: readonly unknown[];
  /** Kept with the plan and handed over again with each repeat of its request. */
  reused: boolean;
}

const WHOLE_PLAN_STATEMENTS = new WeakMap<SeriesPlan, Map<string, WholePlanStatement>>();

/** The statement reading some projects of a plan: the series statement, or the plan's own (a formula's). */
function planStatement(
  plan: SeriesPlan,
  layout: PointLayout,
  projects: readonly PlannedProject[],
): { text: string; parameters: unknown[] } {
  if (plan.source !== undefined) return plan.source.statement(layout, projects);
  const { text, parameters } = statementFor(plan, layout);
  return { text, parameters: parameters(query(plan, projects)) };
}

function statementFor(plan: SeriesPlan, layout: PointLayout): SeriesStatement {
  return seriesStatement({
    layout,
    options: plan.options,
    extraFields: plan.metric.extraFields,
    asOf: plan.asOf !== null,
    vintage: plan.vintage,
    limited: plan.limitPerProject != null,
  });
}

function query(plan: SeriesPlan, projects: readonly PlannedProject[]) {
  return {
    projectIds: projects.map((p) => p.id),
    slugs: projects.map((p) => p.slug),
    from: plan.from,
    to: plan.to,
    metric: plan.metric.name,
    options: plan.options,
    asOf: plan.asOf,
    lagDays: plan.lagDays,
    limitPerProject: plan.limitPerProject ?? null,
    stabilizationDays: plan.metric.stabilizationDays,
  };
}
