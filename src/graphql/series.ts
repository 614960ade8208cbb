import type { SeriesKey } from '../api/series-loader.js';
import { builder } from './builder.js';
import { DataPointRef } from './data-point.js';
import { ProjectEnum } from './enums.js';

export const SeriesRef = builder.objectRef<SeriesKey>('Series').implement({
  description: 'The daily values of one project of a metric within the requested range.',
  fields: (t) => ({
    project: t.field({ type: ProjectEnum, description: 'The project, as an enum value.', resolve: (s) => s.slug }),
    slug: t.exposeString('slug', { description: 'The project\'s original slug, as REST spells it.' }),
    points: t.field({
      type: [DataPointRef],
      description: 'Points from `from` to `to` inclusive, ascending by date, at most one per day; empty when none.',
      resolve: (s, _args, ctx) => ctx.loaders.series.load(s),
    }),
    firstDate: t.field({
      type: 'Date',
      nullable: true,
      description: 'The first day with data in the whole series (ignores the range), for setting a chart axis; null when there is none.',
      resolve: async (s, _args, ctx) => (await ctx.loaders.coverage.load(s)).first,
    }),
    lastDate: t.field({
      type: 'Date',
      nullable: true,
      description: 'The last day with data in the whole series (ignores the range); null when there is none.',
      resolve: async (s, _args, ctx) => (await ctx.loaders.coverage.load(s)).last,
    }),
  }),
});
