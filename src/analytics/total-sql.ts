import { memberBuckets, numberParameters, PARAMETERS, transformed, type SeriesQuery } from '../series/series-sql.js';
import type { SeriesOptions } from '../series/series-options.js';
import type { TotalOp } from './total-request.js';

/** What decides a total statement's text; equal shapes share one prepared statement. */
export interface TotalShape {
  options: SeriesOptions;
  op: TotalOp;
  requireComplete: boolean;
  asOf: boolean;
}

/** A statement and how to fill its parameters from the members' series query. */
export interface TotalStatement {
  text: string;
  parameters(q: SeriesQuery): unknown[];
}

/**
 * The SQL of a total: each member bucketed with the aggregation and filled by the series
 * path's own SQL (`memberBuckets`), gaps kept; the members combined per bucket; then the
 * total transformed over calendar buckets. One row per bucket, ascending:
 * `date, value, contributors, missing` (all text; `missing` a JSON array of slugs in
 * member order), where a member is expected in a bucket its stored days span (as of
 * the instant read at) and is missing there without a value.
 */
export function totalStatement(shape: TotalShape): TotalStatement {
  const o = shape.options;
  const key =
    `${o.interval}|${o.aggregation}|${o.fill}|${o.transform}|${o.window}` +
    `|${shape.op}|${shape.requireComplete}|${shape.asOf}`;
  let built = STATEMENTS.get(key);
  if (built === undefined) {
    built = numberParameters<SeriesQuery>(statement(shape), PARAMETERS);
    STATEMENTS.set(key, built);
  }
  return built;
}

// Private

const STATEMENTS = new Map<string, TotalStatement>();

/** A bucket's member values in ascending order; PostgreSQL computes the repeated aggregate once. */
const SORTED = '(array_agg(c.value order by c.value) filter (where c.value is not null))';

/** Each op over the values of a bucket's members that have one (nulls are left out by every aggregate). */
const COMBINED: Record<TotalOp, string> = {
  sum: 'sum(c.value)',
  avg: 'avg(c.value)',
  min: 'min(c.value)',
  max: 'max(c.value)',
  count: 'count(c.value)::numeric',
  // Exact on numeric: the middle value, or the mean of the middle two (percentile_cont works in float8).
  median: `(${SORTED}[(count(c.value)::integer + 1) / 2] + ${SORTED}[(count(c.value)::integer + 2) / 2]) / 2`,
};

function statement(shape: TotalShape): string {
  const { options } = shape;
  const members = memberBuckets({ layout: 'rest', options, extraFields: [], asOf: shape.asOf }, 'members');
  const complete = shape.requireComplete ? 'case when t.contributors = t.expected then t.value end' : 't.value';
  return `with cells as (
    select r.slug, r.position, o.bucket, o.value
    from unnest({{ids}}::integer[], {{slugs}}::text[]) with ordinality as r (project_id, slug, position)
    cross join lateral (${members}) o
  ),
  combined as (
    select c.bucket, count(*)::integer as expected, count(c.value)::integer as contributors,
      ${COMBINED[shape.op]} as value,
      coalesce(json_agg(c.slug order by c.position) filter (where c.value is null), '[]'::json)::text as missing
    from cells c group by c.bucket
  ),
  grid as (
    select g::date as bucket, t.expected, t.contributors, t.missing, ${complete} as value,
      coalesce(date_trunc({{unit}}, {{from}}::date::timestamp)::date, '-infinity'::date) as out_lo
    from (select min(bucket) as lo, max(bucket) as hi from combined) span
    cross join generate_series(span.lo::timestamp, span.hi::timestamp, {{step}}::interval) g
    left join combined t on t.bucket = g::date
  ),
  shaped as (select bucket, expected, contributors, missing, out_lo, ${transformed(options)} as value from grid)
  select bucket::text as date, trim_scale(value)::text as value, contributors::text as contributors, missing
  from shaped
  where bucket >= out_lo and ${options.fill === 'none' ? 'contributors > 0' : 'expected > 0'}
  order by bucket`;
}
