import { freshnessOf, type Freshness } from '../catalog/freshness.js';
import type { Builder } from './builder.js';
import type { SeriesRef } from './series.js';

/** `Series.freshness`: how current a series is against its metric's update schedule. */
export function addFreshness(builder: Builder, Series: SeriesRef): void {
  const FreshnessRef = builder.objectRef<Freshness>('Freshness').implement({
    description:
      "How current a series is against its metric's schedule (`MetricInfo.expectedBy`): day D is " +
      'expected by D + 1 at that UTC time. Judged by the service clock, or at `asOf` when it is earlier.',
    fields: (t) => ({
      expectedLastDate: t.field({
        type: 'Date',
        description: 'The newest day that should have landed by now.',
        resolve: (f) => f.expectedLastDate,
      }),
      lastDate: t.field({
        type: 'Date',
        nullable: true,
        description: 'The last stored day; null when the series has none.',
        resolve: (f) => f.lastDate,
      }),
      lastWriteAt: t.field({
        type: 'DateTime',
        nullable: true,
        description: 'When the series was last written; null when it never was.',
        resolve: (f) => f.lastWriteAt,
      }),
      lagDays: t.int({
        nullable: true,
        description: 'Days the last stored day lies behind `expectedLastDate` (0 when on time); null without data.',
        resolve: (f) => f.lagDays,
      }),
      stale: t.boolean({
        description: 'True when the last stored day is older than `expectedLastDate`, or there is none.',
        resolve: (f) => f.stale,
      }),
    }),
  });
  builder.objectField(Series, 'freshness', (t) =>
    t.field({
      type: FreshnessRef,
      description: "Whether the series is up to date under its metric's schedule (ignores the range).",
      resolve: async (s, _args, ctx) => {
        const { plan, project } = s;
        const coverage = await ctx.loaders.coverage.load({
          metric: plan.metric.name,
          slug: project.slug,
          asOf: plan.asOf,
        });
        const clock = ctx.services.clock();
        const now = plan.asOf !== null && Date.parse(plan.asOf) < clock.getTime() ? new Date(plan.asOf) : clock;
        return freshnessOf(plan.metric, coverage, now);
      },
    }),
  );
}
