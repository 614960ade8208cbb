import { z } from 'zod';
import type { Catalog } from '../catalog/load-catalog.js';
import type { SeriesPlan } from '../series/series-plan.js';
import { planMetric } from '../formula/formula-plan.js';
import { SERIES_REQUEST_SCHEMA, type SeriesRequestInput } from '../series/series-request.js';
import type { Builder } from './builder.js';
import { chargeSeries } from './charge-series.js';
import type { Enums } from './enums.js';
import type { SeriesRef } from './series.js';

/** The `Metric` type and the `metric` query field. */
export function addMetricQuery(builder: Builder, refs: { catalog: Catalog; enums: Enums; Series: SeriesRef }) {
  const Metric = builder.objectRef<SeriesPlan>('Metric').implement({
    description: "One metric's series for the requested projects, range and options.",
    fields: (t) => ({
      name: t.string({
        description: "The metric's REST name, e.g. token-price-usd.",
        resolve: (plan) => plan.metric.name,
      }),
      valueKind: t.field({
        type: refs.enums.ValueKind,
        description: 'Whole numbers or decimals.',
        resolve: (plan) => plan.metric.valueKind,
      }),
      series: t.field({
        type: [refs.Series],
        description: 'One series per requested project, in request order (duplicates collapsed).',
        resolve: (plan) => plan.projects.map((project) => ({ plan, project })),
      }),
    }),
  });

  builder.queryField('metric', (t) =>
    t.field({
      type: Metric,
      nullable: true,
      description:
        'The series of one metric. Same rules as REST /v1/metrics/<name> (the ' +
        'same validation code): omitted `projects` means every project of the metric ' +
        '(an error where the metric requires projects); a project the metric does ' +
        'not allow is an error naming it; bounds are inclusive. The options shape ' +
        "the series as in REST's extension parameters; with none, the stored daily " +
        'points.',
      args: t.validate(
        {
          name: t.arg({ type: refs.enums.MetricName, required: true, description: 'The metric.' }),
          projects: t.arg({
            type: [refs.enums.Project],
            required: false,
            description:
              "Projects to return, in the order wanted; omitted means all of the metric's projects where allowed.",
          }),
          from: t.arg({
            type: 'Date',
            required: false,
            description: 'First day, inclusive; omitted means the earliest stored day.',
          }),
          to: t.arg({
            type: 'Date',
            required: false,
            description: 'Last day, inclusive; omitted means the latest stored day.',
          }),
          interval: t.arg({
            type: refs.enums.Interval,
            required: false,
            defaultValue: 'day',
            description: 'Calendar buckets; DAY is the stored daily series.',
          }),
          aggregation: t.arg({
            type: refs.enums.Aggregation,
            required: false,
            description: "How a bucket's days become one value; omitted means the metric's default.",
          }),
          fill: t.arg({
            type: refs.enums.Fill,
            required: false,
            defaultValue: 'none',
            description: 'What a bucket without data becomes.',
          }),
          transform: t.arg({
            type: refs.enums.Transform,
            required: false,
            description: 'A transform of the bucketed series.',
          }),
          window: t.arg.int({
            required: false,
            description: 'Buckets a MOVING_AVERAGE spans, this one included (1 to 3650; default 7).',
          }),
          asOf: t.arg({
            type: 'DateTime',
            required: false,
            description:
              'Answer with the values as they were served at this instant: revised values ' +
              'as they were then, points written later absent. Omitted means now.',
          }),
          vintage: t.arg({
            type: refs.enums.Vintage,
            required: false,
            defaultValue: 'latest',
            description:
              "Which of each day's values to read (see Vintage); buckets, fill and transforms apply to them.",
          }),
          lagDays: t.arg.int({
            required: false,
            description: 'Days after each day for KNOWN_AFTER (0 to 3650); required with it, refused without it.',
          }),
          limitPerProject: t.arg.int({
            required: false,
            description:
              'Only the newest this many points (buckets) of each series within the range, ' +
              'still ascending (1 to 10000): `limitPerProject: 1` is the latest value. Priced by what is read.',
          }),
        },
        metricArgsSchema(refs.catalog),
      ),
      // Validated and charged per field, like one REST request each: the unit paid at authentication counts towards
      // the first.
      resolve: async (_root, { request }, ctx) => {
        await chargeSeries(ctx, request);
        return planMetric(request, ctx.directory);
      },
    }),
  );
}

/** The `metric` field's arguments as REST's series request reads them (an argument given as null is absent). */
export type MetricArgs = { name: string } & {
  [K in Exclude<keyof SeriesRequestInput, 'metric'>]?: SeriesRequestInput[K] | null;
};

/**
 * The shared series request schema over the `metric` field's arguments (as graphql coerced
 * them); it yields `{ request }`. The field validates with it, and the answer's size is
 * estimated with it before a request runs (answer-size.ts).
 */
export function metricArgsSchema(catalog: Catalog) {
  return z
    .preprocess(
      (args: MetricArgs): SeriesRequestInput => ({
        metric: catalog.metric(args.name),
        projects: args.projects ?? undefined,
        from: args.from ?? undefined,
        to: args.to ?? undefined,
        interval: args.interval ?? undefined,
        aggregation: args.aggregation ?? undefined,
        fill: args.fill ?? undefined,
        transform: args.transform ?? undefined,
        window: args.window ?? undefined,
        asOf: args.asOf ?? undefined,
        vintage: args.vintage ?? undefined,
        lagDays: args.lagDays ?? undefined,
        limitPerProject: args.limitPerProject ?? undefined,
      }),
      SERIES_REQUEST_SCHEMA,
    )
    .transform((request) => ({ request }));
}
