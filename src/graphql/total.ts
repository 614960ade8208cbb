import { readTotal, type Total, type TotalPoint } from '../analytics/read-total.js';
import { TOTAL_OPS, validateTotalRequest } from '../analytics/total-request.js';
import type { Catalog } from '../catalog/load-catalog.js';
import { todayEpochDay } from '../dates.js';
import { priceTotal } from '../limits/analytics-cost.js';
import { planSeries } from '../series/series-plan.js';
import { given, TOTAL_ARGS } from './analytics-args.js';
import type { Builder } from './builder.js';
import type { Enums } from './enums.js';
import { exactNumber } from './exact-numbers.js';
import type { GroupNameRef } from './groups.js';

/** The `Total` and `TotalPoint` types, the `TotalOp` enum and the `total` query field. */
export function addTotalQuery(builder: Builder, refs: { catalog: Catalog; enums: Enums; Group: GroupNameRef }) {
  const { enums } = refs;
  const TotalOp = builder.enumType('TotalOp', {
    description:
      'How a total combines the members that have a value in a bucket: SUM, AVG, MIN, MAX, COUNT (of members with ' +
      'a value) or MEDIAN (the middle value, or the mean of the middle two).',
    values: Object.fromEntries(TOTAL_OPS.map((op) => [op.toUpperCase(), { value: op }])),
  });
  const Point = builder.objectRef<TotalPoint>('TotalPoint').implement({
    description: 'One bucket of a total, with the members it is made of and those it is missing.',
    fields: (t) => ({
      date: t.field({ type: 'Date', description: 'The first day of the bucket.', resolve: (p) => p.date }),
      value: t.float({
        nullable: true,
        description:
          'The combined value, transformed if asked; a whole number for an INTEGER metric under SUM, MIN and MAX ' +
          '(and the metric’s default aggregation). Null when no member has a value, when the transform cannot be ' +
          'known, and with `requireComplete` when a member is missing.',
        resolve: (p, _args, ctx, info) => (p.value === null ? null : exactNumber(ctx.splices, info, p.value)),
      }),
      contributors: t.exposeInt('contributors', { description: 'Members with a value in the bucket.' }),
      missing: t.field({
        type: [enums.Project],
        description:
          'Members expected in the bucket (their stored days span it) without a value, in member order: a gap ' +
          'that would otherwise look like a fall in the total.',
        resolve: (p) => p.missing,
      }),
    }),
  });
  const TotalType = builder.objectRef<Total>('Total').implement({
    description: 'A metric combined across the members of a group or a list of projects, bucket by bucket.',
    fields: (t) => ({
      name: t.string({ description: "The metric's REST name.", resolve: (total) => total.metric }),
      op: t.field({ type: TotalOp, description: 'How the members are combined.', resolve: (total) => total.op }),
      expected: t.field({
        type: [enums.Project],
        description: 'The members the total is over, in order.',
        resolve: (total) => [...total.expected],
      }),
      points: t.field({
        type: [Point],
        description: 'One point per bucket, ascending.',
        resolve: (total) => total.points,
      }),
    }),
  });

  builder.queryField('total', (t) =>
    t.field({
      type: TotalType,
      description:
        'A metric totalled across a group or projects, as REST /v1/totals/<name> (the same validation): each ' +
        'member is bucketed with the aggregation and filled first, then `op` combines the members with a value, ' +
        'then `transform` applies to the total. Each point names the expected members that are missing.',
      args: {
        name: t.arg({ type: enums.MetricName, required: true, description: 'The metric.' }),
        group: t.arg({ type: refs.Group, required: false, description: "A group; its members are the metric's." }),
        projects: t.arg({
          type: [enums.Project],
          required: false,
          description: 'The members instead of a group; neither means every project of the metric.',
        }),
        op: t.arg({ type: TotalOp, required: false, defaultValue: 'sum', description: 'How members combine.' }),
        from: t.arg({ type: 'Date', required: false, description: 'First day, inclusive.' }),
        to: t.arg({ type: 'Date', required: false, description: 'Last day, inclusive.' }),
        interval: t.arg({ type: enums.Interval, required: false, defaultValue: 'day', description: 'Buckets.' }),
        aggregation: t.arg({
          type: enums.Aggregation,
          required: false,
          description: "How a member's days in a bucket become one value; omitted, the metric's default.",
        }),
        fill: t.arg({
          type: enums.Fill,
          required: false,
          defaultValue: 'none',
          description: "What a member's bucket without data becomes (a filled member is not missing).",
        }),
        transform: t.arg({ type: enums.Transform, required: false, description: 'A transform of the total.' }),
        window: t.arg.int({ required: false, description: 'Buckets a MOVING_AVERAGE spans (default 7).' }),
        asOf: t.arg({ type: 'DateTime', required: false, description: 'The values as served at this instant.' }),
        requireComplete: t.arg.boolean({
          required: false,
          defaultValue: false,
          description: 'A bucket with a missing member has a null value.',
        }),
      },
      resolve: async (_root, args, ctx) => {
        const request = validateTotalRequest(
          refs.catalog,
          {
            metric: refs.catalog.metric(args.name),
            group: given(args.group),
            projects: given(args.projects),
            op: given(args.op),
            from: given(args.from),
            to: given(args.to),
            interval: given(args.interval),
            aggregation: given(args.aggregation),
            fill: given(args.fill),
            transform: given(args.transform),
            window: given(args.window),
            asOf: given(args.asOf),
            requireComplete: given(args.requireComplete),
          },
          TOTAL_ARGS,
        );
        const { storedSpans, clock } = ctx.services;
        const stored = request.series.slugs.map((slug) => storedSpans.of(request.series.metric.name, slug));
        await ctx.meter.charge(priceTotal(request, todayEpochDay(clock()), stored).cost);
        const plan = planSeries(request.series, ctx.directory);
        return readTotal(ctx.services.reads, plan, request.op, request.requireComplete, ctx.signal);
      },
    }),
  );
}
