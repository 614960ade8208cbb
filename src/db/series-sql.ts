/**
 * The SQL of the series path: one statement answers one batch of a plan (one metric, one
 * range, any number of projects) with one row per project, in the order asked:
 * `project_id, slug, version, points`, where `points` is the project's points as JSON
 * text built by PostgreSQL. Passing that text on is what makes large answers cheap: the
 * driver hands over one value per project instead of a row per point (measured in
 * docs/benchmarks.md, "PostgreSQL builds each project's JSON text").
 *
 * Parameters: $1 project ids, $2 first day or null, $3 last day or null, $4 the slugs in
 * the same order as the ids. Each project's points come from one primary-key range scan,
 * ascending by day. `version` is the dataset version, read in the same statement as the
 * points so an ETag never names data older or newer than the body it comes with.
 */

/** How a point is written: the REST contract's `{date, value, …extra fields}`, or GraphQL's `{date, value, extra}`. */
export type PointLayout = 'rest' | 'graphql';

/** The statement text for a layout; texts are constants, so the driver prepares each once per connection. */
export function seriesSql(layout: PointLayout): string {
  return SERIES_SQL[layout];
}

// Private

/** Dates as their ISO text and values from the exact numeric, so nothing is parsed or rounded on the way. */
const POINT_JSON: Record<PointLayout, string> = {
  rest: `'{"date":"' || pt.day::text || '","value":' || pt.value::text
      || coalesce(',' || nullif(substr(pt.extra::text, 2, length(pt.extra::text) - 2), ''), '') || '}'`,
  graphql: `'{"date":"' || pt.day::text || '","value":' || pt.value::text
      || ',"extra":' || coalesce(pt.extra::text, 'null') || '}'`,
};

function statement(pointJson: string): string {
  return `select r.project_id, r.slug, (select version::text from dataset_version) as version,
  coalesce((
    select '[' || string_agg(${pointJson}, ',' order by pt.day) || ']'
    from point pt
    where pt.project_id = r.project_id
      and pt.day between coalesce($2::date, '-infinity') and coalesce($3::date, 'infinity')
  ), '[]') as points
  from unnest($1::integer[], $4::text[]) with ordinality as r (project_id, slug, position)
  order by r.position`;
}

const SERIES_SQL: Record<PointLayout, string> = {
  rest: statement(POINT_JSON.rest),
  graphql: statement(POINT_JSON.graphql),
};
