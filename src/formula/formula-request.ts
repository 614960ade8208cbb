import { z } from 'zod';
import { issuesError } from '../api/api-error.js';
import type { Catalog, FormulaInputDefinition, MetricDefinition } from '../catalog/load-catalog.js';
import { clipped } from '../clipped.js';
import { memberProjects } from '../analytics/members.js';
import type { RequestIssue } from '../api/api-error.js';
import { AGGREGATIONS, type Aggregation } from '../series/series-options.js';
import { SERIES_REQUEST_SCHEMA, type SeriesRequest, type SeriesRequestInput } from '../series/series-request.js';
import { FormulaError, FUNCTIONS, INPUT_NAME, inputsUsed, MAX_INPUTS, parseFormula } from './formula-expression.js';

/** A formula request as an adapter read it: the expression, its inputs, and a series request's fields. */
export interface FormulaRequestInput extends Omit<SeriesRequestInput, 'metric' | 'aggregation'> {
  expr?: string | undefined;
  inputs: readonly { name: string; metric: string; aggregation?: string | undefined }[];
  /** A catalog group: its projects every input allows, instead of `projects`. */
  group?: string | undefined;
}

/** The fields of a formula request a caller can get wrong: a series request's, the expression and the inputs. */
export type FormulaRequestField = Exclude<keyof FormulaRequestInput, 'aggregation'>;

/**
 * The one validation of a formula request, shared by REST and GraphQL. It yields a series
 * request whose metric is the formula (named `formula`, over the projects every input
 * allows), so plan, pricing and serialization are the series path's. Issues: `expr` (with
 * the position the expression is refused at), `inputs` (a bad name, an unknown metric or
 * aggregation, an input the expression does not use, more than {@link MAX_INPUTS}),
 * `projects` (one an input metric does not allow, naming it), and the series fields'.
 */
export function formulaRequestSchema(catalog: Catalog) {
  return z.custom<FormulaRequestInput>().transform((input, ctx): SeriesRequest => {
    const inputs = checkInputs(catalog, input.inputs, ctx);
    // The names as given: an input refused for its metric is not also an unknown name in the expression.
    const names = input.inputs.map((i) => i.name);
    if (input.expr === undefined)
      ctx.addIssue({ code: 'custom', path: ['expr'], message: 'an expression is required' });
    else {
      try {
        const used = inputsUsed(parseFormula(input.expr, names));
        for (const name of names.filter((n) => !used.includes(n)))
          ctx.addIssue({ code: 'custom', path: ['inputs'], message: `input ${name} is not used by the expression` });
      } catch (error) {
        if (!(error instanceof FormulaError)) throw error;
        ctx.addIssue({ code: 'custom', path: ['expr'], message: error.message });
      }
    }
    const projects = commonProjects(inputs);
    const asked = groupProjects(catalog, input, projects, ctx);
    checkProjects(inputs, asked, ctx);
    if (inputs.length > 0 && projects.length === 0 && asked === undefined)
      ctx.addIssue({ code: 'custom', path: ['projects'], message: 'the input metrics share no project' });
    const metric: MetricDefinition = {
      name: 'formula',
      valueKind: 'decimal',
      projectRequired: false,
      defaultAggregation: 'sum',
      description: 'A formula over stored metrics.',
      projects,
      sampleProjects: false,
      extraFields: [],
      sampleSeries: { model: 'walk', min: 0, max: 1 },
      formula: { expr: input.expr ?? '', inputs },
      unit: 'formula result',
      methodology: 'The expression evaluated per bucket of its inputs.',
      tags: [],
      expectedBy: '00:00',
      stabilizationDays: 0,
    };
    const series = SERIES_REQUEST_SCHEMA.safeParse({
      ...input,
      projects: asked,
      metric,
      inputs: undefined,
      expr: undefined,
      group: undefined,
    });
    if (!series.success) {
      // Projects were checked against each input above, with the input named.
      for (const issue of series.error.issues)
        if (issue.path[0] !== 'projects' || asked === undefined) ctx.addIssue({ ...issue, code: 'custom' });
      return z.NEVER;
    }
    return series.data;
  });
}

/** Validates a formula request for REST, or one 400 ApiError naming each parameter as REST calls it. */
export function validateFormulaRequest(
  catalog: Catalog,
  input: FormulaRequestInput,
  names: Readonly<Record<FormulaRequestField, string>>,
): SeriesRequest {
  const result = formulaRequestSchema(catalog).safeParse(input);
  if (result.success) return result.data;
  throw issuesError(result.error.issues, names);
}

// Private

/**
 * The projects asked for: `projects` as given, or a group's members that every input allows
 * (the shared rule of src/analytics/members.ts, over the inputs' common projects).
 */
function groupProjects(
  catalog: Catalog,
  input: FormulaRequestInput,
  common: readonly string[],
  ctx: z.RefinementCtx,
): readonly string[] | undefined {
  if (input.group === undefined) return input.projects;
  const issues: RequestIssue[] = [];
  const members = memberProjects(
    catalog,
    { name: 'these inputs', projects: common },
    input.group,
    input.projects,
    issues,
  );
  for (const issue of issues) ctx.addIssue({ code: 'custom', path: ['group'], message: issue.message });
  return members;
}

function checkInputs(
  catalog: Catalog,
  raw: FormulaRequestInput['inputs'],
  ctx: z.RefinementCtx,
): FormulaInputDefinition[] {
  const issue = (message: string) => ctx.addIssue({ code: 'custom', path: ['inputs'], message });
  if (raw.length === 0) issue('name at least one input, as name:metric');
  if (raw.length > MAX_INPUTS) {
    issue(`a formula has at most ${MAX_INPUTS} inputs, got ${raw.length}`);
    return [];
  }
  const inputs: FormulaInputDefinition[] = [];
  for (const { name, metric: metricName, aggregation } of raw) {
    const shown = JSON.stringify(clipped(name));
    if (!INPUT_NAME.test(name)) issue(`input name ${shown} must match [a-z_][a-z0-9_]{0,15}`);
    else if (Object.hasOwn(FUNCTIONS, name)) issue(`input name ${shown} is a function's name`);
    else if (inputs.some((i) => i.name === name)) issue(`input name ${shown} is given twice`);
    const metric = catalog.byName.get(metricName);
    if (metric === undefined)
      issue(`input ${shown}: unknown stored metric ${JSON.stringify(clipped(metricName))}; GET /v1/metrics lists them`);
    if (aggregation !== undefined && !(AGGREGATIONS as readonly string[]).includes(aggregation))
      issue(
        `input ${shown}: expected an aggregation of ${AGGREGATIONS.join(', ')}, got ` +
          `${JSON.stringify(clipped(aggregation))}`,
      );
    if (metric !== undefined)
      inputs.push({
        name,
        metric,
        aggregation: (aggregation as Aggregation | undefined) ?? metric.defaultAggregation,
      });
  }
  return inputs;
}

/** The projects every input allows, in the first input's order. */
function commonProjects(inputs: readonly FormulaInputDefinition[]): string[] {
  const [first, ...rest] = inputs;
  return (first?.metric.projects ?? []).filter((slug) => rest.every((i) => i.metric.projects.includes(slug)));
}

/** Each requested project must be allowed by every input metric; the refusing ones are named. */
function checkProjects(
  inputs: readonly FormulaInputDefinition[],
  projects: readonly string[] | undefined,
  ctx: z.RefinementCtx,
): void {
  if (projects === undefined) return;
  if (projects.length === 0) ctx.addIssue({ code: 'custom', path: ['projects'], message: 'name at least one project' });
  const offending = [...new Set(projects)].flatMap((slug) => {
    const refusing = inputs.filter((i) => !i.metric.projects.includes(slug)).map((i) => i.metric.name);
    return slug === '' || refusing.length > 0 ? [{ slug, refusing }] : [];
  });
  for (const { slug, refusing } of offending.slice(0, 5)) {
    const message =
      slug === ''
        ? 'empty project name in the list'
        : `${JSON.stringify(clipped(slug))} is not a project of ${refusing.join(' and ')}; ` +
          `a formula serves the projects all its inputs allow: ${commonProjects(inputs).join(', ')}`;
    ctx.addIssue({ code: 'custom', path: ['projects'], message });
  }
  if (offending.length > 5)
    ctx.addIssue({ code: 'custom', path: ['projects'], message: `and ${offending.length - 5} more` });
}
