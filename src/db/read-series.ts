import { IncompleteResultError } from './classify-error.js';
import type { ColumnText, Queryable, Store } from './store.js';

/**
 * Series built as JSON text by PostgreSQL: the driver hands over one string per project
 * instead of turning every point into JS values, which is where the time would go.
 * Each project's points come from one primary-key range scan, ascending by day.
 * Values are written from the exact numeric; the date is the ISO text of the day.
 */
const POINTS_IN_RANGE = (pointJson: string) => `coalesce((
    select '[' || string_agg(${pointJson}, ',' order by pt.day) || ']'
    from point pt
    where pt.project_id = r.project_id
      and pt.day between coalesce($2::date, '-infinity') and coalesce($3::date, 'infinity')
  ), '[]')`;

/** `{"date":…,"value":…}` followed by the point's extra fields, as the REST contract writes points. */
const REST_POINT = `'{"date":"' || pt.day::text || '","value":' || pt.value::text
      || coalesce(',' || nullif(substr(pt.extra::text, 2, length(pt.extra::text) - 2), ''), '') || '}'`;

/** `{"date":…,"value":…,"extra":…}`, the shape of a GraphQL DataPoint. */
const GRAPHQL_POINT = `'{"date":"' || pt.day::text || '","value":' || pt.value::text
      || ',"extra":' || coalesce(pt.extra::text, 'null') || '}'`;

/** One row per requested project, in request order, with the dataset version for the ETag. */
export const REST_SERIES_SQL = `select r.slug, (select version::text from dataset_version) as version,
  ${POINTS_IN_RANGE(REST_POINT)} as points
  from unnest($1::integer[], $4::text[]) with ordinality as r (project_id, slug, position)
  order by r.position`;

/** One row per project id, for the GraphQL loader's batches. */
export const GRAPHQL_SERIES_SQL = `select r.project_id as "projectId", ${POINTS_IN_RANGE(GRAPHQL_POINT)} as points
  from unnest($1::integer[]) as r (project_id)`;

/** One project of the REST body: its slug, the dataset version (for the ETag), its points as a JSON array. */
export type RestSeriesRow = [slug: ColumnText, version: ColumnText, points: ColumnText];

export interface RestSeriesQuery {
  projects: readonly { id: number; slug: string }[];
  from: string | null;
  to: string | null;
}

/**
 * The REST body's parts, undecoded, `batchRows` projects per round trip so a huge answer
 * stays small in memory; when every project fits one batch, one plain statement (no
 * cursor, which costs about 15% more) reads them all.
 */
export function streamRestSeries(store: Store, q: RestSeriesQuery, batchRows: number, signal?: AbortSignal): AsyncIterable<RestSeriesRow[]> {
  const params = [q.projects.map((p) => p.id), q.from, q.to, q.projects.map((p) => p.slug)];
  const batch = q.projects.length <= batchRows ? Infinity : batchRows;
  return completeRows(store.streamRaw(REST_SERIES_SQL, params, batch, signal) as AsyncIterable<RestSeriesRow[]>);
}

/** Passes batches on, refusing one with holes so a cut-short result is never served as data. */
async function* completeRows(batches: AsyncIterable<RestSeriesRow[]>): AsyncGenerator<RestSeriesRow[]> {
  for await (const batch of batches) {
    for (let i = 0; i < batch.length; i += 1) if (!Array.isArray(batch[i])) throw new IncompleteResultError();
    yield batch;
  }
}

export interface JsonSeriesRow {
  projectId: number;
  points: string;
}

/** The points of several projects as JSON arrays, one row per project id. */
export async function readSeriesJson(
  db: Queryable,
  q: { projectIds: readonly number[]; from: string | null; to: string | null },
  signal?: AbortSignal,
): Promise<JsonSeriesRow[]> {
  return db.query<JsonSeriesRow>(GRAPHQL_SERIES_SQL, [q.projectIds, q.from, q.to], signal);
}
