import { z } from 'zod';
import { requestCost } from '../api/request-cost.js';
import { createSeriesRequestSchema, type SeriesRequest } from '../api/series-request.js';
import { CATALOG } from '../catalog/load-catalog.js';
import { fromEpochDay, todayEpochDay } from '../dates.js';
import { builder } from './builder.js';
import { MetricNameEnum, ProjectEnum, ValueKindEnum } from './enums.js';
import { SeriesRef } from './series.js';

const requestSchema = createSeriesRequestSchema(CATALOG);

/**
 * The `metric` arguments run through the same request schema as REST. The zod plugin
 * hands the schema's output to the resolver, so it receives `{ request }`.
 */
const metricArgsSchema = z
  .object({
    name: z.string(),
    projects: z.array(z.string()).nullish(),
    from: z.string().nullish(),
    to: z.string().nullish(),
  })
  .transform((a): z.input<typeof requestSchema> => ({
    metric: a.name,
    ...(a.projects == null ? {} : { projects: a.projects }),
    ...(a.from == null ? {} : { from: a.from }),
    ...(a.to == null ? {} : { to: a.to }),
  }))
  .pipe(requestSchema)
  .transform((request) => ({ request }));

export const MetricRef = builder.objectRef<SeriesRequest>('Metric').implement({
  description: 'One metric\'s series for the requested projects and range.',
  fields: (t) => ({
    name: t.string({ description: 'The metric\'s REST name, e.g. token-price-usd.', resolve: (r) => r.metric.name }),
    valueKind: t.field({ type: ValueKindEnum, description: 'Whole numbers or decimals.', resolve: (r) => r.metric.valueKind }),
    series: t.field({
      type: [SeriesRef],
      description: 'One series per requested project, in request order (duplicates collapsed).',
      resolve: (r) => r.slugs.map((slug) => ({ metric: r.metric.name, slug, from: r.from, to: r.to })),
    }),
  }),
});

builder.queryType({
  description: 'Daily metric time series.',
  fields: (t) => ({
    metric: t.field({
      type: MetricRef,
      description:
        'The series of one metric. Same rules as REST /v1/metrics/<name>: omitted `projects` means every project of the metric (an error where the metric requires projects); a project the metric does not allow is an error naming it; bounds are inclusive.',
      args: {
        name: t.arg({ type: MetricNameEnum, required: true, description: 'The metric.' }),
        projects: t.arg({
          type: [ProjectEnum],
          required: false,
          description: 'Projects to return, in the order wanted; omitted means all of the metric\'s projects where allowed.',
        }),
        from: t.arg({ type: 'Date', required: false, description: 'First day, inclusive; omitted means the earliest stored day.' }),
        to: t.arg({ type: 'Date', required: false, description: 'Last day, inclusive; omitted means the latest stored day.' }),
      },
      validate: { schema: metricArgsSchema as unknown as z.ZodType<never> },
      // Charged per field, like a REST request each: the unit paid at authentication counts towards the first.
      resolve: async (_root, args, ctx) => {
        const { request } = args as unknown as z.output<typeof metricArgsSchema>;
        await ctx.meter.charge(requestCost(request, fromEpochDay(todayEpochDay())));
        return request;
      },
    }),
  }),
});
