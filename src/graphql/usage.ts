import type { RateLimitQuote } from '../limits/rate-limiter.js';
import { USAGE_DAYS, USAGE_HOURS, type KeyUsage } from '../limits/usage-counter.js';
import type { Builder } from './builder.js';

/** The `usage` field: the calling key's spend and its limit, as `GET /v1/usage` answers them. */
export function addUsageQuery(builder: Builder) {
  const RateLimit = builder.objectRef<RateLimitQuote>('RateLimit').implement({
    description: "The calling key's bucket now; every field null for a key without a limit.",
    fields: (t) => ({
      limit: t.int({
        nullable: true,
        description: 'The most units the key can spend at once.',
        resolve: (q) => q.limit,
      }),
      remaining: t.int({ nullable: true, description: 'Whole units left now.', resolve: (q) => q.remaining }),
      resetSeconds: t.int({
        nullable: true,
        description: 'Seconds until the bucket is full again.',
        resolve: (q) => q.resetSeconds,
      }),
    }),
  });
  const UsageHour = builder.objectRef<KeyUsage['hours'][number]>('UsageHour').implement({
    description: 'What the key spent in one UTC hour.',
    fields: (t) => ({
      hour: t.field({ type: 'DateTime', description: "The hour's start.", resolve: (h) => h.hour }),
      units: t.exposeInt('units', { description: 'Units the requests were priced at.' }),
      requests: t.exposeInt('requests', { description: 'Requests charged to the key (dry runs are not).' }),
    }),
  });
  const UsageDay = builder.objectRef<KeyUsage['days'][number]>('UsageDay').implement({
    description: 'What the key spent in one UTC day.',
    fields: (t) => ({
      date: t.field({ type: 'Date', description: 'The day.', resolve: (d) => d.date }),
      units: t.exposeInt('units', { description: 'Units the requests were priced at.' }),
      requests: t.exposeInt('requests', { description: 'Requests charged to the key (dry runs are not).' }),
    }),
  });
  const Usage = builder.objectRef<KeyUsage & { rateLimit: RateLimitQuote }>('Usage').implement({
    description: "The calling key's spend, from every instance on the database, and its limit now.",
    fields: (t) => ({
      rateLimit: t.field({ type: RateLimit, description: 'Its bucket now.', resolve: (u) => u.rateLimit }),
      hours: t.field({
        type: [UsageHour],
        description: `The last ${USAGE_HOURS} UTC hours, the current one last, empty ones as 0.`,
        resolve: (u) => u.hours,
      }),
      days: t.field({
        type: [UsageDay],
        description: `The last ${USAGE_DAYS} UTC days, today last, empty ones as 0.`,
        resolve: (u) => u.days,
      }),
    }),
  });
  builder.queryField('usage', (t) =>
    t.field({
      type: Usage,
      description:
        "The calling key's spend: requests and units per hour and per day, and its limit and balance; " +
        'GET /v1/usage answers the same. Costs the one unit every request pays.',
      resolve: async (_root, _args, ctx) => {
        const usage = await ctx.services.usage.read(ctx.caller);
        return { ...usage, rateLimit: await ctx.meter.quote() };
      },
    }),
  );
}
