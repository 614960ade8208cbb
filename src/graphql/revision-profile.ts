import { guardUnavailable } from '../api/unavailable.js';
import { priceProfile } from '../limits/history-cost.js';
import { validateLookbackDays } from '../revisions/profile-request.js';
import { DEFAULT_LOOKBACK_DAYS, type RevisionProfile } from '../revisions/revision-profiles.js';
import type { Builder } from './builder.js';
import type { MetricInfoRef } from './metric-info.js';

/** The `RevisionProfile` type and `MetricInfo.revisionProfile`: REST's `/v1/metrics/<name>/profile`. */
export function addRevisionProfileField(builder: Builder, refs: { MetricInfo: MetricInfoRef }) {
  const RevisionProfileRef = builder.objectRef<RevisionProfile>('RevisionProfile').implement({
    description:
      "How a metric's values were revised over its trailing days of data (every project): measured, not declared.",
    fields: (t) => ({
      revisedShare: t.float({
        nullable: true,
        description: 'The fraction (0 to 1) of days written more than once; null when the window holds none.',
        resolve: (p) => p.revisedShare,
      }),
      medianRevisionDelayHours: t.float({
        nullable: true,
        description: "Median hours from a day's first write to each of its later writes; null without revisions.",
        resolve: (p) => p.medianRevisionDelayHours,
      }),
      p95AbsRevisionPercent: t.float({
        nullable: true,
        description:
          "The 95th percentile of revisions' changes relative to the value replaced, in percent; null without any.",
        resolve: (p) => p.p95AbsRevisionPercent,
      }),
      stableAfterDays: t.int({
        nullable: true,
        description:
          'The smallest K such that 95 % of days never change after the end of UTC day D + K; null when fewer ' +
          'than 30 days are in the window.',
        resolve: (p) => p.stableAfterDays,
      }),
      days: t.int({
        description: 'Days (project × date) in the window that were ever written.',
        resolve: (p) => p.days,
      }),
      computedAt: t.field({
        type: 'DateTime',
        description: 'When these figures were computed: again after a write to the metric, at most once a minute.',
        resolve: (p) => p.computedAt,
      }),
    }),
  });

  builder.objectField(refs.MetricInfo, 'revisionProfile', (t) =>
    t.field({
      type: RevisionProfileRef,
      description:
        'How this metric was revised over its last `lookbackDays` days of data (7 to 3650; REST ' +
        'GET /v1/metrics/<name>/profile).',
      args: {
        lookbackDays: t.arg.int({
          required: false,
          defaultValue: DEFAULT_LOOKBACK_DAYS,
          description: 'Days of data, back from the last one written.',
        }),
      },
      resolve: async (metric, args, ctx) => {
        const lookbackDays = validateLookbackDays(args.lookbackDays, 'lookbackDays');
        const profiles = ctx.services.revisionProfiles;
        const kept = profiles.isKept(metric.name, lookbackDays);
        await ctx.meter.charge(priceProfile(metric.projects.length, lookbackDays, kept));
        const ids = metric.projects.flatMap((slug) => ctx.directory.idOf(metric.name, slug) ?? []);
        return guardUnavailable(() => profiles.get(ctx.services.reads, metric.name, ids, lookbackDays));
      },
    }),
  );
}
