import { ApiError } from '../api/api-error.js';
import type { SeriesUpdate } from '../live/series-updates.js';
import type { Builder } from './builder.js';
import type { Enums } from './enums.js';

/**
 * The subscription `seriesUpdated`: an event each time a series the subscriber asked for
 * was written, after the write committed (see live/series-updates.ts). Served over
 * Server-Sent Events (GraphQL over SSE): POST the subscription with
 * `Accept: text/event-stream` and the key; the key's rate limit pays one unit to subscribe.
 */
export function addSeriesUpdatedSubscription(builder: Builder, refs: { enums: Enums }) {
  const SeriesUpdateRef = builder.objectRef<SeriesUpdate>('SeriesUpdate').implement({
    description:
      'Data landed: one series was written over a range of days, and the write has committed, so a query now reads it.',
    fields: (t) => ({
      name: t.field({ type: refs.enums.MetricName, description: 'The metric.', resolve: (u) => u.name }),
      project: t.field({ type: refs.enums.Project, description: 'The project.', resolve: (u) => u.slug }),
      slug: t.string({ description: "The project's slug as REST writes it.", resolve: (u) => u.slug }),
      from: t.field({ type: 'Date', description: 'The first day written.', resolve: (u) => u.from }),
      to: t.field({ type: 'Date', description: 'The last day written.', resolve: (u) => u.to }),
      updatedAt: t.field({
        type: 'DateTime',
        description: "When it was written (the series' new updatedAt).",
        resolve: (u) => u.updatedAt,
      }),
    }),
  });

  builder.subscriptionType({ description: 'Live events, over Server-Sent Events.' });
  builder.subscriptionField('seriesUpdated', (t) =>
    t.field({
      type: SeriesUpdateRef,
      description:
        'An event each time a matching series is written (by an import, a sync, ' +
        'or any other writer), once the write has committed. Omitted `name` means ' +
        'every metric, omitted `projects` every project. A key may hold SUBSCRIPTIONS_PER_KEY ' +
        'subscriptions open at once (RATE_LIMITED past it); events a slow subscriber ' +
        'has not read are kept up to 1,000, the oldest dropped first.',
      args: {
        name: t.arg({ type: refs.enums.MetricName, required: false, description: 'Only this metric.' }),
        projects: t.arg({ type: [refs.enums.Project], required: false, description: 'Only these projects.' }),
      },
      subscribe: (_root, args, ctx) => {
        const slugs = args.projects ?? undefined;
        if (args.name != null && slugs !== undefined) {
          const allowed = ctx.services.catalog.metric(args.name).projects;
          const foreign = slugs.filter((slug) => !allowed.includes(slug));
          if (foreign.length > 0)
            throw new ApiError(
              'bad-request',
              `${args.name} has no project ${foreign.slice(0, 5).join(', ')}; it has ${allowed.join(', ')}`,
            );
        }
        return ctx.services.seriesUpdates.subscribe(
          ctx.caller,
          { name: args.name ?? undefined, slugs },
          ctx.signal,
          ctx.keyStillValid,
        );
      },
      resolve: (update) => update,
    }),
  );
}
