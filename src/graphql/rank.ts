import { readRanking, type Ranking, type RankRow } from '../analytics/read-rank.js';
import { DEFAULT_TOP, MAX_TOP, RANK_BY, RANK_ORDERS, validateRankRequest } from '../analytics/rank-request.js';
import type { Catalog } from '../catalog/load-catalog.js';
import { todayEpochDay } from '../dates.js';
import { priceRanking } from '../limits/analytics-cost.js';
import { planSeries } from '../series/series-plan.js';
import { given, RANK_ARGS } from './analytics-args.js';
import type { Builder } from './builder.js';
import type { Enums } from './enums.js';
import { exactNumber } from './exact-numbers.js';
import type { GroupNameRef } from './groups.js';

/** The `Ranking` and `RankRow` types, the `RankBy` and `Order` enums and the `rank` query field. */
export function addRankQuery(builder: Builder, refs: { catalog: Catalog; enums: Enums; Group: GroupNameRef }) {
  const { enums } = refs;
  const RankBy = builder.enumType('RankBy', {
    description:
      'What members are ranked by: VALUE in the window, CHANGE from the previous window, or PERCENT_CHANGE from it.',
    values: Object.fromEntries(RANK_BY.map((by) => [by.toUpperCase(), { value: by }])),
  });
  const Order = builder.enumType('Order', {
    description: 'DESC ranks the largest first, ASC the smallest.',
    values: Object.fromEntries(RANK_ORDERS.map((order) => [order.toUpperCase(), { value: order }])),
  });
  const number = (
    text: string | null,
    ctx: Parameters<typeof exactNumber>[0],
    info: Parameters<typeof exactNumber>[1],
  ) => (text === null ? null : exactNumber(ctx, info, text));
  const Row = builder.objectRef<RankRow>('RankRow').implement({
    description: 'One ranked member.',
    fields: (t) => ({
      rank: t.exposeInt('rank', { description: 'From 1; equal values are ordered by slug.' }),
      project: t.field({ type: enums.Project, description: 'The member.', resolve: (r) => r.slug }),
      slug: t.exposeString('slug', { description: "The member's slug, as REST spells it." }),
      value: t.float({
        description: "The member's days in the window aggregated into one value.",
        resolve: (r, _args, ctx, info) => exactNumber(ctx.splices, info, r.value),
      }),
      previousValue: t.float({
        nullable: true,
        description: 'The same over the previous window; null without data there.',
        resolve: (r, _args, ctx, info) => number(r.previousValue, ctx.splices, info),
      }),
      previousRank: t.int({
        nullable: true,
        description: 'The rank in the previous window, ranked the same way; null without data there.',
        resolve: (r) => r.previousRank,
      }),
      change: t.float({
        nullable: true,
        description: 'value − previousValue; null without a previous value.',
        resolve: (r, _args, ctx, info) => number(r.change, ctx.splices, info),
      }),
      changePercent: t.float({
        nullable: true,
        description: 'The change in percent of the previous value; null from a zero or missing one.',
        resolve: (r, _args, ctx, info) => number(r.changePercent, ctx.splices, info),
      }),
      shareOfTotal: t.float({
        nullable: true,
        description: 'Percent of the sum of all ranked values; for SUM and LAST aggregations only, else null.',
        resolve: (r, _args, ctx, info) => number(r.shareOfTotal, ctx.splices, info),
      }),
    }),
  });
  const RankingType = builder.objectRef<Ranking>('Ranking').implement({
    description: 'Members of a group or a list of projects ranked over a window, beside the window before it.',
    fields: (t) => ({
      from: t.field({ type: 'Date', description: 'First day of the window.', resolve: (r) => r.current.from }),
      to: t.field({ type: 'Date', description: 'Last day of the window.', resolve: (r) => r.current.to }),
      previousFrom: t.field({
        type: 'Date',
        description: 'First day of the previous window: as many days, just before `from`.',
        resolve: (r) => r.previous.from,
      }),
      previousTo: t.field({ type: 'Date', description: 'The day before `from`.', resolve: (r) => r.previous.to }),
      rows: t.field({ type: [Row], description: 'The top rows, by rank.', resolve: (r) => r.rows }),
      unranked: t.field({
        type: [enums.Project],
        description: 'Members without data in the window, in member order.',
        resolve: (r) => r.unranked,
      }),
    }),
  });

  builder.queryField('rank', (t) =>
    t.field({
      type: RankingType,
      description:
        'Members ranked by their value over a window (or its change from the previous window), as REST ' +
        '/v1/rank/<name> (the same validation). A member without data in the window is unranked; one without a ' +
        'previous value ranks after the others when ranking by a change.',
      args: {
        name: t.arg({ type: enums.MetricName, required: true, description: 'The metric.' }),
        group: t.arg({ type: refs.Group, required: false, description: "A group; its members are the metric's." }),
        projects: t.arg({
          type: [enums.Project],
          required: false,
          description: 'The members instead of a group; neither means every project of the metric.',
        }),
        from: t.arg({ type: 'Date', required: true, description: 'First day of the window, inclusive.' }),
        to: t.arg({ type: 'Date', required: true, description: 'Last day of the window, inclusive.' }),
        by: t.arg({ type: RankBy, required: false, defaultValue: 'value', description: 'What to rank by.' }),
        aggregation: t.arg({
          type: enums.Aggregation,
          required: false,
          description: "How a member's days in a window become one value; omitted, the metric's default.",
        }),
        order: t.arg({ type: Order, required: false, defaultValue: 'desc', description: 'Largest or smallest first.' }),
        top: t.arg.int({
          required: false,
          defaultValue: DEFAULT_TOP,
          description: `Rows to answer (1 to ${MAX_TOP}).`,
        }),
        asOf: t.arg({ type: 'DateTime', required: false, description: 'The values as served at this instant.' }),
      },
      resolve: async (_root, args, ctx) => {
        const request = validateRankRequest(
          refs.catalog,
          {
            metric: refs.catalog.metric(args.name),
            group: given(args.group),
            projects: given(args.projects),
            from: args.from,
            to: args.to,
            aggregation: given(args.aggregation),
            asOf: given(args.asOf),
            by: given(args.by),
            order: given(args.order),
            top: given(args.top),
          },
          RANK_ARGS,
        );
        const { storedSpans, clock } = ctx.services;
        const stored = request.series.slugs.map((slug) => storedSpans.of(request.series.metric.name, slug));
        await ctx.meter.charge(priceRanking(request, todayEpochDay(clock()), stored).cost);
        return readRanking(ctx.services.reads, planSeries(request.series, ctx.directory), request, ctx.signal);
      },
    }),
  );
}
