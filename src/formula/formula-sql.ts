import type { Aggregation } from '../catalog/load-catalog.js';
import { isDailyReplay, type SeriesOptions } from '../series/series-options.js';
import {
  bucketRows,
  isoInstant,
  type PointColumns,
  type PointLayout,
  pointSource,
  projectPoints,
  transformed,
} from '../series/series-sql.js';
import type { CompiledExpression } from './compile-expression.js';

/** What decides a formula statement's text. */
export interface FormulaShape {
  layout: PointLayout;
  /** The formula's options; each input is bucketed and filled with them, then the transform applies to the result. */
  options: SeriesOptions;
  /** Each input's aggregation, in input order. */
  aggregations: readonly Aggregation[];
  /** The expression over the columns `i0.value`, `i1.value`, … (input order). */
  expression: CompiledExpression;
  asOf: boolean;
  limited: boolean;
}

/** The values a formula statement's parameters come from. */
export interface FormulaQuery {
  /** The answer's project ids (its first input's) and slugs, in answer order. */
  projectIds: readonly number[];
  slugs: readonly string[];
  /** Per input, the project id of each slug (in the same order). */
  inputIds: readonly (readonly number[])[];
  from: string | null;
  /** Where inputs are read from: `from`, moved back by the buckets a transform looks at first. */
  readFrom: string | null;
  to: string | null;
  /** The name export lines carry. */
  metric: string;
  options: SeriesOptions;
  asOf: string | null;
  limitPerProject: number | null;
  /** The expression's literals (see {@link CompiledExpression}). */
  literals: readonly string[];
}

/**
 * The statement of a formula: per project, each input's buckets (the series path's
 * {@link bucketRows}, with the input's aggregation and the formula's interval and fill),
 * joined on the bucket (every input present with fill `none`, any with another fill), the
 * expression per bucket, then the transform over the calendar buckets of the result. Its
 * rows are the series statement's (`project_id, slug, version, updated_at, points`), so
 * REST, GraphQL and export write them as any series. User text reaches it only as
 * parameters (the compiled expression's literals); column names are made here.
 */
export function formulaStatement(shape: FormulaShape): { text: string; parameters(q: FormulaQuery): unknown[] } {
  const key = JSON.stringify([
    typeof shape.layout === 'string' ? shape.layout : shape.layout.graphql,
    shape.options,
    shape.aggregations,
    shape.expression.text,
    shape.asOf,
    shape.limited,
  ]);
  let built = STATEMENTS.get(key);
  if (built === undefined) {
    built = numberParameters(statement(shape));
    if (STATEMENTS.size >= MAX_KEPT_STATEMENTS) STATEMENTS.clear();
    STATEMENTS.set(key, built);
  }
  return built;
}

// Private

const STEPS = { day: '1 day', week: '7 days', month: '1 month', quarter: '3 months', year: '1 year' } as const;

/** Formula statements kept for reuse; unlike series shapes, expressions are unbounded, so the memo is. */
const MAX_KEPT_STATEMENTS = 500;
const STATEMENTS = new Map<string, { text: string; parameters(q: FormulaQuery): unknown[] }>();

function statement(shape: FormulaShape): string {
  const { options } = shape;
  const inputs = shape.aggregations.map((aggregation, i) => {
    const inputShape = {
      layout: shape.layout,
      options: { ...options, aggregation, transform: null, window: null },
      extraFields: [],
      asOf: shape.asOf,
    };
    // Stored days need no buckets: one primary-key range scan per input, about 3x faster (bench "formula").
    const rows = isDailyReplay(options)
      ? `select pt.day as bucket, 1 as n, pt.value, pt.written_at as revised from ${pointSource(inputShape)} pt
          where pt.project_id = r.project_id
            and pt.day between coalesce({{from}}::date, '-infinity') and coalesce({{to}}::date, 'infinity')`
      : bucketRows(inputShape);
    return `(select x.* from (select r.i${i} as project_id) r cross join lateral (${rows}) x) i${i}`;
  });
  const inner = options.fill === 'none';
  const joined = inputs
    .map((input, i) => {
      if (i === 0) return input;
      const bucket = inner ? 'i0.bucket' : `coalesce(${range(i, (k) => `i${k}.bucket`)})`;
      return `${inner ? 'join' : 'full join'} ${input} on i${i}.bucket = ${bucket}`;
    })
    .join('\n        ');
  const all = (f: (i: number) => string) => range(shape.aggregations.length, f);
  const bucket = inner ? 'i0.bucket' : `coalesce(${all((i) => `i${i}.bucket`)})`;
  const expression = shape.expression.text;
  const evaluated =
    `select ${bucket} as bucket, ${expression} as value, ` +
    `least(${all((i) => `coalesce(i${i}.n, 0)`)}) as n, greatest(${all((i) => `i${i}.revised`)}) as revised
        from ${joined}`;
  const shaped =
    options.transform === null
      ? `select bucket, n, value, revised from e`
      : `select bucket, n, ${transformed(options)} as value, revised from (
          select g::date as bucket, coalesce(e.n, 0) as n, e.value, e.revised,
            date_trunc({{unit}}, coalesce({{outfrom}}::date, (select min(bucket) from e))::timestamp)::date as out_lo
          from generate_series((select min(bucket) from e)::timestamp, (select max(bucket) from e)::timestamp,
            {{step}}::interval) g
          left join e on e.bucket = g::date
        ) filled`;
  const kept =
    options.transform === null
      ? 'select * from shaped'
      : `select * from shaped where bucket >= date_trunc({{unit}}, ` +
        `coalesce({{outfrom}}::date, '-infinity')::timestamp)::date${inner ? ' and n > 0' : ''}`;
  const rows = shape.limited ? `select o.* from (${kept}) o order by o.bucket desc limit {{limit}}` : kept;
  const point: PointColumns = {
    day: 'o.bucket',
    value: 'trim_scale(o.value)::text',
    number: 'o.value',
    always: false,
    count: 'o.n',
    extra: 'null::jsonb',
    revised: 'o.revised',
    status: 'null::text',
  };
  const updatedAt = shape.asOf ? 'least(max(p.updated_at), {{asof}}::text::timestamptz)' : 'max(p.updated_at)';
  const empty = typeof shape.layout === 'string' && shape.layout !== 'rest' ? `''` : `'[]'`;
  const columns = all((i) => `i${i}`);
  const arrays = all((i) => `{{ids${i}}}::integer[]`);
  return `select r.project_id, r.slug, (select version::text from dataset_version) as version,
  (select ${isoInstant(updatedAt)} from project p where p.id = any({{allids}}::integer[])) as updated_at,
  coalesce((select ${projectPoints(shape.layout, point, 'o.bucket')} from (
    with e as (${evaluated}),
      shaped as (${shaped})
    ${rows}
  ) o), ${empty}) as points
  from unnest({{ids}}::integer[], {{slugs}}::text[], ${arrays}) with ordinality as r (project_id, slug, ${columns}, position)
  order by r.position`;
}

function range(n: number, f: (i: number) => string): string {
  return Array.from({ length: n }, (_, i) => f(i)).join(', ');
}

/** The named parameters a formula statement may use, written `{{name}}`; `ids0`… and `lit0`… are numbered. */
function parameterValue(name: string, q: FormulaQuery): unknown {
  const numbered = /^(ids|lit)(\d+)$/.exec(name);
  if (numbered !== null) {
    const i = Number(numbered[2]);
    return numbered[1] === 'ids' ? q.inputIds[i] : q.literals[i];
  }
  switch (name) {
    case 'ids':
      return q.projectIds;
    case 'slugs':
      return q.slugs;
    case 'allids':
      return q.inputIds.flat();
    case 'from':
      return q.readFrom;
    case 'outfrom':
      return q.from;
    case 'to':
      return q.to;
    case 'unit':
      return q.options.interval;
    case 'step':
      return STEPS[q.options.interval];
    case 'window':
      return q.options.window;
    case 'metric':
      return q.metric;
    case 'asof':
      return q.asOf;
    case 'limit':
      return q.limitPerProject;
    default:
      throw new Error(`unknown parameter {{${name}}}`);
  }
}

/** `{{name}}` to `$1`, `$2`, … in order of first use (PostgreSQL refuses a parameter it never sees). */
function numberParameters(template: string): { text: string; parameters(q: FormulaQuery): unknown[] } {
  const used: string[] = [];
  const text = template.replace(/\{\{(\w+)\}\}/g, (_, name: string) => {
    const at = used.indexOf(name);
    if (at >= 0) return `$${at + 1}`;
    used.push(name);
    return `$${used.length}`;
  });
  return { text, parameters: (q) => used.map((name) => parameterValue(name, q)) };
}
