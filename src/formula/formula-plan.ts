import type { FormulaDefinition, MetricDefinition } from '../catalog/load-catalog.js';
import { fromEpochDay, toEpochDay } from '../dates.js';
import type { ProjectDirectory } from '../db/project-directory.js';
import { bucketStart, shiftBucket, type SeriesOptions } from '../series/series-options.js';
import { planSeries, type SeriesPlan } from '../series/series-plan.js';
import type { SeriesRequest } from '../series/series-request.js';
import { compileExpression, type CompiledExpression } from './compile-expression.js';
import { parseFormula } from './formula-expression.js';
import { formulaStatement } from './formula-sql.js';

/**
 * The plan of a series request: a stored metric's (the series path's own), or, for a metric
 * with a formula (a derived metric or a formula request), one whose statement computes it.
 */
export function planMetric(request: SeriesRequest, directory: ProjectDirectory): SeriesPlan {
  return request.metric.formula === undefined ? planSeries(request, directory) : planFormula(request, directory);
}

/**
 * A formula request's plan: the request's projects resolved to each input's project ids.
 * Its points come from {@link formulaStatement}; everything else (batching, REST bytes,
 * GraphQL splices, export lines) treats it as any series plan.
 */
export function planFormula(request: SeriesRequest, directory: ProjectDirectory): SeriesPlan {
  const formula = request.metric.formula!;
  const expression = compiledFormula(formula);
  const idOf = (metric: MetricDefinition, slug: string) => directory.idOf(metric.name, slug) ?? -1;
  const first = formula.inputs[0]!.metric;
  const plan: SeriesPlan = {
    metric: request.metric,
    projects: request.slugs.map((slug) => ({ slug, id: idOf(first, slug) })),
    from: request.from,
    to: request.to,
    options: request.options,
    asOf: request.asOf,
    vintage: 'latest',
    lagDays: null,
    ...(request.limitPerProject == null ? {} : { limitPerProject: request.limitPerProject }),
    batchKey: formulaBatchKey(request),
    source: {
      statement: (layout, projects) => {
        const { text, parameters } = formulaStatement({
          layout,
          options: request.options,
          aggregations: formula.inputs.map((input) => input.aggregation ?? request.options.aggregation),
          expression,
          asOf: request.asOf !== null,
          limited: request.limitPerProject != null,
        });
        return {
          text,
          parameters: parameters({
            projectIds: projects.map((p) => p.id),
            slugs: projects.map((p) => p.slug),
            inputIds: formula.inputs.map((input) => projects.map((p) => idOf(input.metric, p.slug))),
            from: request.from,
            readFrom: readFrom(request.from, request.options),
            to: request.to,
            metric: request.metric.name,
            options: request.options,
            asOf: request.asOf,
            limitPerProject: request.limitPerProject ?? null,
            literals: expression.literals,
          }),
        };
      },
    },
  };
  return plan;
}

/**
 * Each input of a formula request as the series request that reads it (its metric, its
 * aggregation, the formula's projects, range and options): what the request is priced on.
 */
export function formulaInputRequests<R extends Pick<SeriesRequest, 'metric' | 'options'>>(request: R): R[] {
  const formula = request.metric.formula;
  if (formula === undefined) return [request];
  return formula.inputs.map((input) => ({
    ...request,
    metric: input.metric,
    options: { ...request.options, aggregation: input.aggregation ?? request.options.aggregation },
  }));
}

// Private

/** Compiled once per formula definition (a derived metric's is shared by all its requests). */
const COMPILED = new WeakMap<FormulaDefinition, CompiledExpression>();

function compiledFormula(formula: FormulaDefinition): CompiledExpression {
  let compiled = COMPILED.get(formula);
  if (compiled === undefined) {
    const names = formula.inputs.map((input) => input.name);
    compiled = compileExpression(parseFormula(formula.expr, names), (name) => `i${names.indexOf(name)}.value`);
    COMPILED.set(formula, compiled);
  }
  return compiled;
}

/** Everything the answer depends on but the projects: the expression and its inputs included. */
function formulaBatchKey({ metric, from, to, options: o, asOf, limitPerProject }: SeriesRequest): string {
  const formula = metric.formula!;
  const inputs = formula.inputs.map((i) => `${i.name}:${i.metric.name}:${i.aggregation ?? ''}`).join(',');
  return JSON.stringify([
    metric.name,
    formula.expr,
    inputs,
    from,
    to,
    o.interval,
    o.aggregation,
    o.fill,
    o.transform,
    o.window,
    asOf,
    limitPerProject ?? null,
  ]);
}

/** `from` moved back by the buckets the transform looks at before the range's first one. */
function readFrom(from: string | null, options: SeriesOptions): string | null {
  if (from === null) return null;
  const back =
    options.transform === 'moving_average'
      ? (options.window ?? 1) - 1
      : options.transform === 'change' || options.transform === 'percent_change'
        ? 1
        : 0;
  if (back === 0) return from;
  return fromEpochDay(shiftBucket(bucketStart(toEpochDay(from), options.interval), options.interval, -back));
}
