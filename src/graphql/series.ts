import { Kind, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';
import { POINT_FIELDS } from '../series/series-sql.js';
import { columnText } from '../db/store.js';
import type { SeriesKey } from '../series/series-loader.js';
import { plainPointFields } from './splice.js';
import type { Builder, GraphqlContext } from './builder.js';
import { chargeSeries } from './charge-series.js';
import { parseExactPoints } from './exact-numbers.js';
import type { DataPointRef } from './data-point.js';
import type { Enums } from './enums.js';

/**
 * A series as fields resolve it. The `metric` field charges its series when asked for;
 * the catalog's `coverage` lists every series without a charge (most ask only for their
 * dates), so those are marked and their points charged when read.
 */
export interface SeriesSource extends SeriesKey {
  unpriced?: true;
}

export function addSeries(builder: Builder, refs: { DataPoint: DataPointRef; enums: Enums }) {
  return builder.objectRef<SeriesSource>('Series').implement({
    description: 'The values of one project of a metric within the requested range.',
    fields: (t) => ({
      project: t.field({
        type: refs.enums.Project,
        description: 'The project, as an enum value.',
        resolve: (s) => s.project.slug,
      }),
      slug: t.string({
        description: "The project's original slug, as REST spells it.",
        resolve: (s) => s.project.slug,
      }),
      points: t.field({
        type: [refs.DataPoint],
        description: 'Points from `from` to `to` inclusive, ascending by date, one per day or bucket; empty when none.',
        resolve: async (s, _args, ctx, info) => {
          if (s.unpriced) await chargeSeries(ctx, { ...s.plan, slugs: [s.project.slug] });
          else if (isRepeatRead(s, info, ctx.pointReads))
            await chargeSeries(ctx, { ...s.plan, slugs: s.plan.projects.map((p) => p.slug) });
          const fields = plainPointFields(info);
          if (fields === undefined)
            return parseExactPoints(columnText(await ctx.loaders.points.load({ ...s, fields: everyField(info) })));
          ctx.splices.add(info, await ctx.loaders.points.load({ ...s, fields }));
          return [];
        },
      }),
      firstDate: t.field({
        type: 'Date',
        nullable: true,
        description:
          'The first day with data in the whole series (ignores the range; with ' +
          '`asOf`, as of that instant), for setting a chart axis; null when there ' +
          'is none.',
        resolve: async (s, _args, ctx) =>
          (await ctx.loaders.coverage.load({ metric: s.plan.metric.name, slug: s.project.slug, asOf: s.plan.asOf }))
            .first,
      }),
      lastDate: t.field({
        type: 'Date',
        nullable: true,
        description:
          'The last day with data in the whole series (ignores the range; with `asOf`, ' +
          'as of that instant); null when there is none.',
        resolve: async (s, _args, ctx) =>
          (await ctx.loaders.coverage.load({ metric: s.plan.metric.name, slug: s.project.slug, asOf: s.plan.asOf }))
            .last,
      }),
      updatedAt: t.field({
        type: 'DateTime',
        nullable: true,
        description:
          'When any point of the whole series was last written (imported, synced, ' +
          'revised; with `asOf`, the last write by that instant); null when none ' +
          'ever was.',
        resolve: async (s, _args, ctx) =>
          (await ctx.loaders.coverage.load({ metric: s.plan.metric.name, slug: s.project.slug, asOf: s.plan.asOf }))
            .updatedAt,
      }),
    }),
  });
}

export type SeriesRef = ReturnType<typeof addSeries>;

// Private

/** The point fields without `status` (which reads each day's history) unless the selection names it somewhere. */
const WITHOUT_STATUS = POINT_FIELDS.filter((f) => f !== 'status');

function everyField(info: GraphQLResolveInfo): readonly (typeof POINT_FIELDS)[number][] {
  const names = (set: SelectionSetNode | undefined, depth: number): boolean =>
    depth < 8 &&
    (set?.selections ?? []).some((s) =>
      s.kind === Kind.FIELD
        ? s.name.value === 'status'
        : s.kind === Kind.INLINE_FRAGMENT
          ? names(s.selectionSet, depth + 1)
          : names(info.fragments[s.name.value]?.selectionSet, depth + 1),
    );
  return info.fieldNodes.some((n) => names(n.selectionSet, 0)) ? POINT_FIELDS : WITHOUT_STATUS;
}

/**
 * Whether this `points` field is a further selection of its plan's points, to be charged.
 * The `metric` field pays for one read of its series; every further `points` selection of
 * the same plan (an alias of `points`, or of `series`) answers all its series again, and
 * was free: fifteen aliases read and sent fifteen times the data a key paid for, past the
 * answer budget's estimate too. The paths read are the request's (`ctx.pointReads`).
 */
function isRepeatRead(s: SeriesSource, info: GraphQLResolveInfo, reads: GraphqlContext['pointReads']): boolean {
  const keys: (string | number)[] = [];
  for (let p: GraphQLResolveInfo['path'] | undefined = info.path; p !== undefined; p = p.prev)
    if (typeof p.key === 'string') keys.unshift(p.key);
  const path = keys.join('.');
  const seen = reads.get(s.plan) ?? new Set<string>();
  reads.set(s.plan, seen);
  if (seen.has(path)) return false;
  seen.add(path);
  return seen.size > 1;
}
