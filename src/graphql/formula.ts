import { z } from 'zod';
import type { Catalog } from '../catalog/load-catalog.js';
import { planFormula } from '../formula/formula-plan.js';
import { formulaRequestSchema, type FormulaRequestInput } from '../formula/formula-request.js';
import type { SeriesPlan } from '../series/series-plan.js';
import type { Builder } from './builder.js';
import { chargeSeries } from './charge-series.js';
import type { Enums } from './enums.js';
import type { GroupNameRef } from './groups.js';
import type { SeriesRef } from './series.js';

/** The `FormulaInput` input, the `FormulaResult` type and the `formula` query field. */
export function addFormulaQuery(
  builder: Builder,
  refs: { catalog: Catalog; enums: Enums; Series: SeriesRef; Group: GroupNameRef },
) {
  const FormulaInput = builder.inputType('FormulaInput', {
    description: 'An input of a formula: the name the expression uses for a stored metric, and how it is bucketed.',
    fields: (t) => ({
      name: t.string({ required: true, description: 'The name in the expression: [a-z_][a-z0-9_]{0,15}.' }),
      metric: t.field({ type: refs.enums.MetricName, required: true, description: 'A stored metric.' }),
      aggregation: t.field({
        type: refs.enums.Aggregation,
        required: false,
        description: "How its days become a bucket's value; omitted means the metric's default.",
      }),
    }),
  });

  const FormulaResult = builder.objectRef<{ expr: string; plan: SeriesPlan }>('FormulaResult').implement({
    description: "A formula's series: the expression evaluated per bucket of each project.",
    fields: (t) => ({
      expr: t.exposeString('expr', { description: 'The expression, as given.' }),
      series: t.field({
        type: [refs.Series],
        description: 'One series per project, in request order; points as in `metric`.',
        resolve: ({ plan }) => plan.projects.map((project) => ({ plan, project })),
      }),
    }),
  });

  builder.queryField('formula', (t) =>
    t.field({
      type: FormulaResult,
      description:
        'An expression over stored metrics per bucket, e.g. `100 * p / (p + b)`: each input is bucketed ' +
        'with its own aggregation, the inputs are joined on (project, bucket), the expression is evaluated ' +
        'per bucket. A bucket where an input is missing has no point (a null one with fill NULL); division ' +
        'by zero, ln or sqrt out of range are null. Operators + - * / ^, unary minus, parentheses, numbers, ' +
        'input names, abs min max coalesce ln exp sqrt; at most 8 inputs, 500 characters, 64 nodes. ' +
        'Projects: those every input allows. Priced as the sum of its inputs. REST: GET /v1/formula.',
      args: t.validate(
        {
          expr: t.arg.string({ required: true, description: 'The expression.' }),
          inputs: t.arg({ type: [FormulaInput], required: true, description: 'The inputs (1 to 8).' }),
          group: t.arg({
            type: refs.Group,
            required: false,
            description: "A group instead of projects: its projects every input allows, in the group's order.",
          }),
          projects: t.arg({
            type: [refs.enums.Project],
            required: false,
            description: 'Projects to compute, in the order wanted; omitted means every project all inputs allow.',
          }),
          from: t.arg({ type: 'Date', required: false, description: 'First day, inclusive.' }),
          to: t.arg({ type: 'Date', required: false, description: 'Last day, inclusive.' }),
          interval: t.arg({ type: refs.enums.Interval, required: false, defaultValue: 'day', description: 'Buckets.' }),
          fill: t.arg({
            type: refs.enums.Fill,
            required: false,
            defaultValue: 'none',
            description: 'What an input bucket without data becomes, before the expression.',
          }),
          transform: t.arg({
            type: refs.enums.Transform,
            required: false,
            description: "A transform of the formula's bucketed series.",
          }),
          window: t.arg.int({ required: false, description: 'Buckets a MOVING_AVERAGE spans (1 to 3650).' }),
          asOf: t.arg({ type: 'DateTime', required: false, description: 'The inputs as they were served then.' }),
          limitPerProject: t.arg.int({ required: false, description: 'Only the newest this many points per project.' }),
        },
        formulaArgsSchema(refs.catalog),
      ),
      resolve: async (_root, { request }, ctx) => {
        await chargeSeries(ctx, request);
        return { expr: request.metric.formula?.expr ?? '', plan: planFormula(request, ctx.directory) };
      },
    }),
  );
}

/** The `formula` field's arguments as graphql coerced them (an argument given as null is absent). */
export interface FormulaArgs {
  expr: string;
  inputs: readonly { name: string; metric: string; aggregation?: string | null }[];
  group?: string | null;
  projects?: readonly string[] | null;
  from?: string | null;
  to?: string | null;
  interval?: string | null;
  fill?: string | null;
  transform?: string | null;
  window?: number | null;
  asOf?: string | null;
  limitPerProject?: number | null;
}

/**
 * The shared formula request schema over the field's arguments; it yields `{ request }`. The
 * field validates with it, and the answer's size is estimated with it (answer-size.ts).
 */
export function formulaArgsSchema(catalog: Catalog) {
  return z
    .preprocess(
      (args: FormulaArgs): FormulaRequestInput => ({
        expr: args.expr,
        inputs: args.inputs.map((i) => ({ name: i.name, metric: i.metric, aggregation: i.aggregation ?? undefined })),
        group: args.group ?? undefined,
        projects: args.projects ?? undefined,
        from: args.from ?? undefined,
        to: args.to ?? undefined,
        interval: args.interval ?? undefined,
        fill: args.fill ?? undefined,
        transform: args.transform ?? undefined,
        window: args.window ?? undefined,
        asOf: args.asOf ?? undefined,
        limitPerProject: args.limitPerProject ?? undefined,
      }),
      formulaRequestSchema(catalog),
    )
    .transform((request) => ({ request }));
}
