import { isDailyReplay, type Aggregation, type SeriesOptions } from './series-options.js';
import type { Vintage } from './vintage.js';

/**
 * The SQL of the series path. One statement answers one batch of a plan (one metric, one
 * range, one set of options, any number of projects) with one row per project, in the
 * order asked: `project_id, slug, version, updated_at, points`, where `points` is the
 * project's points built as text by PostgreSQL in the layout asked for. Passing that text
 * on is what makes large answers cheap: the driver hands over one value per project
 * instead of a row per point (docs/performance.md, "PostgreSQL builds each project's JSON").
 *
 * `version` (the dataset version) and `updated_at` (the newest write to any of the
 * batch's projects) are read in the same statement as the points, so an ETag or a
 * Last-Modified never names data older or newer than the body it comes with.
 *
 * Every interval, aggregation, fill and transform is computed here, in this one place:
 * see {@link bucketedPoints}.
 */

/** The fields of a GraphQL DataPoint, all of which PostgreSQL can write. */
export const POINT_FIELDS = ['date', 'value', 'count', 'extra', 'revisedAt', 'status'] as const;

export type PointField = (typeof POINT_FIELDS)[number];

/**
 * How points are written: REST's `{date, value, …extra}`, export lines (`-extra`: with the
 * extra fields, as the import reads them), typed columns for the binary exports, or
 * GraphQL's DataPoint objects holding exactly the fields a query selected, in its order.
 */
export type PointLayout = 'rest' | ExportLayout | ColumnarLayout | { graphql: readonly PointField[] };

/** The layouts of an export's lines: `-extra` adds the extra fields, `-status` each point's status. */
export type ExportLayout = `${'csv' | 'ndjson'}${'' | '-extra'}${'' | '-status'}`;

/**
 * Typed columns for the Arrow and Parquet exports: per project one JSON object of parallel
 * arrays, `{"days": [...], "values": [...]}` (days since 1970-01-01, the exact numerics, null
 * for a missing value; both null without points), and with `-extra` an `"extra"` array of
 * each point's extra fields (an object, or null). One `JSON.parse` decodes a whole project.
 */
export type ColumnarLayout = 'columns' | 'columns-extra';

/** What decides a statement's text; equal shapes share one prepared statement. */
export interface SeriesShape {
  layout: PointLayout;
  options: SeriesOptions;
  /** The metric's extra fields (catalog identifiers), aggregated like the value. */
  extraFields: readonly string[];
  /**
   * Whether the points are read as of an instant (from the current values and their history) rather than as they are
   * now.
   */
  asOf: boolean;
  /** Which of each day's values are read (src/series/vintage.ts); omitted means `latest`. */
  vintage?: Vintage | undefined;
  /** Whether only the newest `limitPerProject` points of each project are written (still ascending). */
  limited?: boolean;
}

/** A statement and how to fill its parameters. */
export interface SeriesStatement {
  text: string;
  parameters(q: SeriesQuery): unknown[];
}

/** The values a statement's parameters come from. */
export interface SeriesQuery {
  projectIds: readonly number[];
  /** In the same order as `projectIds`. */
  slugs: readonly string[];
  from: string | null;
  to: string | null;
  metric: string;
  options: SeriesOptions;
  /** The instant an as-of statement reads at; ignored by the others. */
  asOf: string | null;
  /** The lag of a `known_after` statement; ignored by the others. */
  lagDays?: number | null | undefined;
  /** Points per project a limited statement writes; ignored by the others. */
  limitPerProject?: number | null;
  /** The metric's `stabilizationDays`, for a point's status (0 when not given). */
  stabilizationDays?: number;
}

/**
 * The statement for a shape; built once per shape (there are at most a few hundred), so the driver prepares each once
 * per connection.
 */
export function seriesStatement(shape: SeriesShape): SeriesStatement {
  const { interval, aggregation, fill, transform, window } = shape.options;
  const layout = typeof shape.layout === 'string' ? shape.layout : shape.layout.graphql.join(',');
  const key =
    `${layout}|${interval}|${aggregation}|${fill}|${transform}` +
    `|${window}|${shape.extraFields.join(',')}|${shape.asOf}|${shape.vintage ?? 'latest'}${shape.limited ? '|limited' : ''}`;
  let built = STATEMENTS.get(key);
  if (built === undefined) {
    built = numberParameters(statement(shape));
    STATEMENTS.set(key, built);
  }
  return built;
}

// Private

/** One bucket as an interval, per interval. */
const STEPS = { day: '1 day', week: '7 days', month: '1 month', quarter: '3 months', year: '1 year' } as const;

/** The named parameters a statement may use, written `{{name}}` in its text. */
export const PARAMETERS = {
  ids: (q: SeriesQuery) => q.projectIds,
  from: (q: SeriesQuery) => q.from,
  to: (q: SeriesQuery) => q.to,
  slugs: (q: SeriesQuery) => q.slugs,
  /** The date_trunc unit. */
  unit: (q: SeriesQuery) => q.options.interval,
  step: (q: SeriesQuery) => STEPS[q.options.interval],
  window: (q: SeriesQuery) => q.options.window,
  metric: (q: SeriesQuery) => q.metric,
  asof: (q: SeriesQuery) => q.asOf,
  lag: (q: SeriesQuery) => q.lagDays ?? null,
  limit: (q: SeriesQuery) => q.limitPerProject ?? null,
  stabilization: (q: SeriesQuery) => q.stabilizationDays ?? 0,
} as const;

const STATEMENTS = new Map<string, SeriesStatement>();

/**
 * Turns `{{name}}` into `$1`, `$2`, … in order of first use. PostgreSQL refuses to prepare
 * a statement with a parameter it never sees, so each text numbers exactly the ones it uses.
 * `named`: the parameters a template may use, the series' {@link PARAMETERS} unless given.
 */
export function numberParameters<Q = SeriesQuery>(
  template: string,
  named: Readonly<Record<string, (q: Q) => unknown>> = PARAMETERS as Readonly<Record<string, (q: Q) => unknown>>,
): { text: string; parameters(q: Q): unknown[] } {
  const used: string[] = [];
  const text = template.replace(/\{\{(\w+)\}\}/g, (_, name: string) => {
    if (!Object.hasOwn(named, name)) throw new Error(`unknown parameter {{${name}}}`);
    const at = used.indexOf(name);
    if (at >= 0) return `$${at + 1}`;
    used.push(name);
    return `$${used.length}`;
  });
  return { text, parameters: (q) => used.map((name) => named[name]!(q)) };
}

function statement(shape: SeriesShape): string {
  const points = isDailyReplay(shape.options) ? storedPoints(shape) : bucketedPoints(shape);
  // As of an instant, the answer was last modified no later than that instant.
  const updatedAt = shape.asOf ? 'least(max(p.updated_at), {{asof}}::text::timestamptz)' : 'max(p.updated_at)';
  return `select r.project_id, r.slug, (select version::text from dataset_version) as version,
  (select ${isoInstant(updatedAt)} from project p where p.id = any({{ids}}::integer[])) as updated_at,
  coalesce((${points}), ${typeof shape.layout === 'string' && shape.layout !== 'rest' ? `''` : `'[]'`}) as points
  from unnest({{ids}}::integer[], {{slugs}}::text[]) with ordinality as r (project_id, slug, position)
  order by r.position`;
}

/**
 * The stored daily points themselves, one primary-key range scan per project, ascending
 * by day: what every request without extension options gets, in exactly the bytes it
 * always got. Dates are their ISO text and values the exact numeric, nothing parsed or
 * rounded on the way.
 */
function storedPoints(shape: SeriesShape): string {
  // Stored values are canonical already (every write path trims them), so they are written as they are.
  const point: PointColumns = {
    day: 'pt.day',
    value: 'pt.value::text',
    number: 'pt.value',
    always: true,
    count: '1',
    extra: 'pt.extra',
    revised: 'pt.written_at',
    status: pointStatus('pt'),
  };
  const history = withStatus(shape.layout) ? ` cross join lateral ${historyOf('pt')} ph` : '';
  const days = `${pointSource(shape)} pt${shape.limited ? '' : history}
    where pt.project_id = r.project_id
      and pt.day between coalesce({{from}}::date, '-infinity') and coalesce({{to}}::date, 'infinity')`;
  return `select ${projectPoints(shape.layout, point, 'pt.day')}
    from ${shape.limited ? `(select pt.* from ${days} order by pt.day desc limit {{limit}}) pt${history}` : days}`;
}

/** The newest `{{limit}}` rows of a project's rows when the shape is limited; the rows themselves otherwise. */
function limited(shape: SeriesShape, rows: string, order: string): string {
  return shape.limited ? `select o.* from (${rows}) o order by ${order} desc limit {{limit}}` : rows;
}

/**
 * Calendar buckets of one project, in steps:
 *
 * - bounds: the range asked for, clipped to the series' first and last stored day (two
 *   index probes), and the buckets holding its ends (`out_lo`, `out_hi`);
 * - warm: how far back to read before the range: `window - 1` buckets for a moving
 *   average, one for a change, and for fill `previous` further back to the last bucket
 *   with data before those, so each of them has a value to carry;
 * - days: the days read, one primary-key range scan; days of the first bucket that lie
 *   before the range are left out, so a bucket only aggregates days inside [from, to];
 * - buckets: each bucket with data, aggregated, with the number of days behind it;
 * - grid: every calendar bucket from the warm-up to `out_hi`, so a transform looks at the
 *   calendar-previous bucket, not the previous stored one;
 * - filled, shaped: the fill, then the transform, over the grid;
 * - the buckets from `out_lo` to `out_hi` are written; with fill `none` only those with data.
 */
function bucketedPoints(shape: SeriesShape): string {
  const point: PointColumns = {
    day: 'o.bucket',
    value: 'trim_scale(o.value)::text',
    number: 'o.value',
    always: false,
    count: 'o.n',
    extra: 'o.extra',
    revised: 'o.revised',
    status: 'o.status',
  };
  return `select ${projectPoints(shape.layout, point, 'o.bucket')}
    from (${limited(shape, bucketRows(shape), 'o.bucket')}) o`;
}

/**
 * The buckets of the project `r.project_id` as rows `bucket, n, value, extra, revised`, in
 * the steps {@link bucketedPoints} describes; a formula joins several of them.
 */
export function bucketRows(shape: SeriesShape): string {
  return `
      ${memberBuckets(shape, 'series')}
    `;
}

/**
 * The buckets of the project `r.project_id` as rows `bucket, n, value, extra, revised`, the
 * steps {@link bucketedPoints} describes. `series` gives the shaped buckets from `out_lo` to
 * `out_hi`. `members` gives each bucket the project's stored days span from the transform's
 * warm-up on, filled but not transformed, gaps included with a null value: what a
 * cross-project total (src/analytics) combines before it transforms the combination.
 */
export function memberBuckets(shape: SeriesShape, use: 'series' | 'members'): string {
  const { options } = shape;
  // The earliest bucket the transform looks at: `window - 1` buckets back, or the previous one.
  const needed =
    options.transform === 'moving_average'
      ? `(b.out_lo::timestamp - ({{window}}::integer - 1) * {{step}}::interval)::date`
      : options.transform === 'change' || options.transform === 'percent_change'
        ? `(b.out_lo::timestamp - {{step}}::interval)::date`
        : 'b.out_lo';
  // Fill `previous` reads back to the last bucket with data before that one, so every bucket
  // the transform looks at has its carried value, not only the range's first.
  const carriedFrom =
    `coalesce((select date_trunc({{unit}}, max(pt.day)::timestamp)::date from ${pointSource(shape)} ` +
    `pt where pt.project_id = r.project_id and pt.day < ${needed}), ${needed})`;
  const warmLo =
    options.fill === 'previous'
      ? `greatest(b.first_bucket, ${carriedFrom})`
      : needed === 'b.out_lo'
        ? 'b.out_lo'
        : `greatest(b.first_bucket, ${needed})`;
  const extra =
    shape.extraFields.length === 0
      ? 'null::jsonb'
      : `jsonb_build_object(${shape.extraFields.map((f) => `'${identifier(f)}', trim_scale(${aggregate(options.aggregation, extraNumber(f))})`).join(', ')}` +
        `)`;
  const revised = selects(shape.layout, 'revisedAt') ? 'max(d.written_at)' : 'null::timestamptz';
  // A bucket is provisional while any of its days is, revised when any of them was.
  const status = withStatus(shape.layout) ? pointStatus('d', (test) => `bool_or(${test})`) : 'null::text';
  const series = use === 'series';
  return (
    `with bounds as (
        select b.*, date_trunc({{unit}}, b.lo::timestamp)::date as out_lo, ` +
    `date_trunc({{unit}}, b.hi::timestamp)::date as out_hi,
          date_trunc({{unit}}, b.first_day::timestamp)::date as first_bucket
        from (
          select f.first_day, greatest(coalesce({{from}}::date, f.first_day), ` +
    `f.first_day) as lo, least(coalesce({{to}}::date, f.last_day), f.last_day) ` +
    `as hi
          from (select min(pt.day) as first_day, max(pt.day) as last_day ` +
    `from ${pointSource(shape)} pt where pt.project_id = r.project_id) f
        ) b
        where b.lo <= b.hi
      ),
      warm as (select b.*, ${warmLo} as warm_lo${series ? '' : `, greatest(b.first_bucket, ${needed}) as lead_lo`} from bounds b),
      days as (
        select pt.day, pt.value, pt.extra, pt.written_at, date_trunc({{unit}}, ` +
    `pt.day::timestamp)::date as bucket
        from warm w join ${pointSource(shape)} pt on pt.project_id = ` +
    `r.project_id and pt.day between w.warm_lo and w.hi
        where pt.day >= w.lo or pt.day < w.out_lo
      ),
      buckets as (
        select d.bucket, ${aggregate(options.aggregation, 'd.value')} ` +
    `as value, count(*)::integer as n, ${extra} as extra, ${revised} as revised, ${status} as status
        from days d${withStatus(shape.layout) ? ` cross join lateral ${historyOf('d')} ph` : ''} group by d.bucket
      ),
      grid as (
        select g::date as bucket, w.out_lo, b.n, b.value, b.extra, b.revised, b.status, ` +
    `count(b.value) over (order by g) as carried
        from warm w cross join generate_series(w.warm_lo::timestamp, ` +
    `w.out_hi::timestamp, {{step}}::interval) g
        left join buckets b on b.bucket = g::date
      ),
      filled as (select bucket, out_lo, coalesce(n, 0) as n, ${FILLED[options.fill]} ` +
    `as value, extra, revised, status from grid),
      shaped as (
        select bucket, n, ${series ? transformed(options) : 'value'} as value,
          ${options.transform === null ? 'case when n > 0 then extra end' : 'null::jsonb'} ` +
    `as extra, revised, status
        from filled
      )
      select s.* from shaped s cross join warm w
      where ${
        series
          ? `s.bucket between w.out_lo and w.out_hi${options.fill === 'none' ? ' and s.n > 0' : ''}`
          : 's.bucket between w.lead_lo and w.out_hi'
      }`
  );
}

/**
 * An extra field as a number, null where a point holds something else there: imports
 * refuse that now, but a row written before must not make its buckets an error.
 */
function extraNumber(field: string): string {
  const path = `d.extra->'${identifier(field)}'`;
  return `case when jsonb_typeof(${path}) = 'number' then (${path})::numeric end`;
}

/** A bucket without data: left missing (none, null), zero, or the last value before it carried on. */
const FILLED: Record<SeriesOptions['fill'], string> = {
  none: 'value',
  null: 'value',
  zero: 'coalesce(value, 0)',
  // PostgreSQL has no IGNORE NULLS: `carried` counts the values so far, so a run of empty
  // buckets shares its number with the last bucket that had one.
  previous: 'first_value(value) over (partition by carried order by bucket)',
};

/**
 * The transform over a filled grid of columns `bucket`, `value` and `out_lo` (the range's first bucket), ordered by
 * bucket; a bucket whose own value is missing stays missing.
 */
export function transformed(options: SeriesOptions): string {
  const previous = 'lag(value) over (order by bucket)';
  switch (options.transform) {
    case null:
      return 'value';
    case 'moving_average':
      return (
        `case when value is not null then avg(value) over (order by bucket rows ` +
        `between {{window}}::integer - 1 preceding and current row) end`
      );
    case 'change':
      return `value - ${previous}`;
    case 'percent_change':
      // Null from a missing or zero previous bucket: never an infinity, never a number made from a gap.
      return `case when ${previous} <> 0 then (value - ${previous}) / abs(${previous}) * 100 end`;
    case 'cumulative_sum':
      // From the range's first bucket: buckets read before it (to carry a value in) add nothing.
      return (
        `case when value is not null then sum(case when bucket >= out_lo then ` +
        `value end) over (order by bucket rows unbounded preceding) end`
      );
  }
}

/** A bucket's aggregation of `value` over days `d` (FIRST and LAST order by `d.day`). */
export function aggregate(aggregation: Aggregation, value: string): string {
  switch (aggregation) {
    case 'sum':
    case 'avg':
    case 'min':
    case 'max':
      return `${aggregation}(${value})`;
    case 'first':
      return `(array_agg(${value} order by d.day))[1]`;
    case 'last':
      return `(array_agg(${value} order by d.day desc))[1]`;
  }
}

export interface PointColumns {
  day: string;
  /** The value's text; SQL null for a bucket without one, unless `always` says it is never null. */
  value: string;
  /** The value as a numeric, SQL null for a bucket without one. */
  number: string;
  always: boolean;
  count: string;
  extra: string;
  /** The newest write time behind the point; SQL null for a filled bucket. */
  revised: string;
  /** The point's status text (PROVISIONAL, REVISED, FINAL); SQL null for a filled bucket. */
  status: string;
}

/** A project's points as one text, in the layout asked for. */
export function projectPoints(layout: PointLayout, p: PointColumns, order: string): string {
  if (layout === 'columns' || layout === 'columns-extra') return columnsText(layout, p, order);
  return aggregateText(layout, pointText(layout, p), order);
}

/** A project's points as parallel arrays (see {@link ColumnarLayout}). */
function columnsText(layout: ColumnarLayout, p: PointColumns, order: string): string {
  const extra = layout === 'columns-extra' ? `, 'extra', array_agg(${p.extra} order by ${order})` : '';
  return (
    `json_build_object('days', array_agg(${p.day} - date '1970-01-01' order by ${order}), ` +
    `'values', array_agg(${p.number} order by ${order})${extra})::text`
  );
}

type TextLayout = Exclude<PointLayout, ColumnarLayout>;

/** One point's text: a missing value is JSON `null`, an empty CSV field. */
export function pointText(layout: TextLayout, p: PointColumns): string {
  const value = p.always ? p.value : `coalesce(${p.value}, 'null')`;
  if (typeof layout !== 'string') {
    const fields: Record<PointField, string> = {
      date: `'"date":"' || ${p.day}::text || '"'`,
      value: `'"value":' || ${value}`,
      count: `'"count":' || ${p.count}`,
      extra: `'"extra":' || coalesce(${p.extra}::text, 'null')`,
      revisedAt: `'"revisedAt":' || coalesce('"' || ${isoInstant(p.revised)} || '"', 'null')`,
      status: `'"status":' || coalesce('"' || ${p.status} || '"', 'null')`,
    };
    return `'{' || ${layout.graphql.map((f) => fields[f]).join(` || ',' || `)} || '}'`;
  }
  const status = layout.endsWith('-status');
  switch (layout) {
    case 'rest':
      return `'{"date":"' || ${p.day}::text || '","value":' || ${value}
        || coalesce(',' || nullif(substr(${p.extra}::text, 2, length(${p.extra}::text) - 2), ''), '') || '}'`;
    case 'csv':
    case 'csv-extra':
    case 'csv-status':
    case 'csv-extra-status':
      return (
        `{{metric}}::text || ',' || r.slug || ',' || ${p.day}` +
        `::text || ',' || ${p.always ? p.value : `coalesce(${p.value}, '')`}
        || ${layout.includes('-extra') ? `',' || coalesce('"' || replace(${p.extra}::text, '"', '""') || '"', '') || ` : ''}` +
        `${status ? `',' || coalesce(${p.status}, '') || ` : ''}E'\\n'`
      );
    case 'ndjson':
    case 'ndjson-extra':
    case 'ndjson-status':
    case 'ndjson-extra-status':
      return (
        `'{"metric":' || to_json({{metric}}::text)::text || ',"project":' || to_json(r.slug)::text ` +
        `|| ',"date":"' || ${p.day}::text || '","value":' || ${value}
        || ${layout.includes('-extra') ? `coalesce(',"extra":' || ${p.extra}::text, '') || ` : ''}` +
        `${status ? `',"status":' || coalesce('"' || ${p.status} || '"', 'null') || ` : ''}E'}\\n'`
      );
  }
}

/** A project's points joined into one text: a JSON array, or export lines. */
export function aggregateText(layout: TextLayout, point: string, order: string): string {
  return typeof layout === 'string' && layout !== 'rest'
    ? `string_agg(${point}, '' order by ${order})`
    : `'[' || string_agg(${point}, ',' order by ${order}) || ']'`;
}

/**
 * Where points are read from. Now: the point table. As of an instant: the value each day
 * had then, which is the current one if it was written by then, else the one in the
 * history whose span holds the instant (at most one does); a day first written later has
 * neither. `written_at` is when the value read was written. The instant is sent as text: the
 * driver writes a timestamptz parameter through a JavaScript Date, which cuts microseconds.
 * The other vintages choose among the same two tables (see {@link vintageSource}).
 */
export function pointSource(shape: Pick<SeriesShape, 'asOf' | 'vintage'>): string {
  if (shape.vintage !== undefined && shape.vintage !== 'latest') return vintageSource(shape);
  if (!shape.asOf) return 'point';
  return (
    `(select c.project_id, c.day, c.value, c.extra, c.written_at from point ` +
    `c where c.written_at <= {{asof}}::text::timestamptz
    union all
    select h.project_id, h.day, h.value, h.extra, h.valid_from from point_history ` +
    `h
    where h.valid_from <= {{asof}}::text::timestamptz and h.valid_to ` +
    `> {{asof}}::text::timestamptz)`
  );
}

/**
 * A vintage's values, one per day at most, from the point table and its history (every
 * value a day was ever served with: the history's spans, then the current value).
 *
 * - `first_release`: the history's earliest value of the day, or the current one when
 *   the day was never replaced or removed (a day's history starts before its current value).
 * - `known_after`: the value served at the day's own instant, the end of UTC day D + lag,
 *   as an as-of read finds it: written by then and, for a history row, not yet replaced.
 *   "By the end of the day" is "at most a microsecond before the next day's 00:00 UTC".
 *
 * With `asOf`, the instant is the earlier of the two, and nothing written after `asOf` is read.
 */
function vintageSource(shape: Pick<SeriesShape, 'asOf' | 'vintage'>): string {
  const asOf = (written: string) => (shape.asOf ? ` and ${written} <= {{asof}}::text::timestamptz` : '');
  if (shape.vintage === 'first_release') {
    const earlier = (p: string, at: string) =>
      `not exists (select 1 from point_history e where e.project_id = ${p}.project_id and e.day = ${p}.day` +
      `${at === '' ? '' : ` and e.valid_from < ${at}`})`;
    return `(select h.project_id, h.day, h.value, h.extra, h.valid_from as written_at from point_history h
    where ${earlier('h', 'h.valid_from')}${asOf('h.valid_from')}
    union all
    select c.project_id, c.day, c.value, c.extra, c.written_at from point c
    where ${earlier('c', '')}${asOf('c.written_at')})`;
  }
  const instant = (day: string) => {
    const end = `(${day} + {{lag}}::integer + 1)::timestamp at time zone 'UTC' - interval '1 microsecond'`;
    return shape.asOf ? `least(${end}, {{asof}}::text::timestamptz)` : `(${end})`;
  };
  return `(select c.project_id, c.day, c.value, c.extra, c.written_at from point c
    where c.written_at <= ${instant('c.day')}
    union all
    select h.project_id, h.day, h.value, h.extra, h.valid_from from point_history h
    where h.valid_from <= ${instant('h.day')} and h.valid_to > ${instant('h.day')})`;
}

/** Whether a layout writes each point's status (a GraphQL field, or an export's `-status`). */
function withStatus(layout: PointLayout): boolean {
  return typeof layout === 'string' ? layout.endsWith('-status') : layout.graphql.includes('status');
}

/**
 * The instant a point's status is judged at: an as-of read's instant, else the statement's
 * start (the database's clock).
 */
const STATUS_AT = `coalesce({{asof}}::text::timestamptz, statement_timestamp())`;

/**
 * A day's write history as known at {@link STATUS_AT}, one primary-key range scan of
 * point_history: its first write (null when it has no history) and the writes that replaced
 * a value by then.
 */
function historyOf(alias: string): string {
  return (
    `(select min(h.valid_from) as first_write, count(*) filter (where h.valid_to <= ${STATUS_AT}) as revisions ` +
    `from point_history h where h.project_id = r.project_id ` +
    `and h.day = ${alias}.day and h.valid_from <= ${STATUS_AT})`
  );
}

/**
 * PROVISIONAL while fewer than the metric's `stabilizationDays` have passed since the day's
 * first write (it may still change), else REVISED when it was written more than once, else
 * FINAL. `alias` names the point read (with `written_at`, the served value's write) and `ph` its
 * {@link historyOf}; `all` wraps each test for a bucket: provisional when any of its days is, revised
 * when any of them was.
 */
function pointStatus(alias: string, all: (test: string) => string = (test) => test): string {
  const provisional =
    `least(${alias}.written_at, ph.first_write) + make_interval(days => {{stabilization}}::integer) ` +
    `> ${STATUS_AT}`;
  return `case when ${all(provisional)} then 'PROVISIONAL' when ${all('ph.revisions > 0')} then 'REVISED' else 'FINAL' end`;
}

/** Whether a layout writes a GraphQL field. */
function selects(layout: PointLayout, field: PointField): boolean {
  return typeof layout !== 'string' && layout.graphql.includes(field);
}

/**
 * A timestamptz as GraphQL's DateTime text: UTC with microseconds, as the changes feed
 * writes it, so a time given out and passed back as `asOf` names the same instant (cut to
 * milliseconds, it fell before the write it named).
 */
export function isoInstant(value: string): string {
  return `to_char(${value} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

/**
 * Extra field names come from the catalog, which admits lower-case identifiers only; checked again before they enter
 * SQL text.
 */
function identifier(name: string): string {
  if (!/^[a-z][a-z0-9_]*$/.test(name))
    throw new Error(`extra field ${JSON.stringify(name)} is not a lower-case identifier`);
  return name;
}
