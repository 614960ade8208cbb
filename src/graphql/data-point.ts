import type { Builder } from './builder.js';
import { keepExact, type ExactPoint } from './exact-numbers.js';

export function addDataPoint(builder: Builder) {
  const PointStatus = builder.enumType('PointStatus', {
    description:
      "How settled a value is, by its day's write history and the metric's `stabilizationDays` " +
      '(judged now, or at `asOf`).',
    values: {
      PROVISIONAL: {
        description:
          "Fewer than `stabilizationDays` days have passed since the day's first write: it may still change.",
      },
      REVISED: { description: 'Written more than once (revised), and past its stabilization period.' },
      FINAL: { description: 'Written once and past its stabilization period.' },
    } as const,
  });
  return builder.objectRef<ExactPoint>('DataPoint').implement({
    description: 'One value of one project: a stored day, or a bucket of days.',
    fields: (t) => ({
      date: t.field({
        type: 'Date',
        description: 'The day, or the first day of the bucket (even when the range starts inside it).',
        resolve: (p) => p.date,
      }),
      value: t.float({
        nullable: true,
        description:
          'The value; a whole number for INTEGER metrics under SUM, MIN, MAX, FIRST ' +
          'and LAST. Null for a bucket filled with NULL and for a transform that ' +
          'cannot be known (at a gap, a percentage from zero).',
        resolve: (p, _args, ctx, info) => {
          keepExact(ctx.splices, info, p.exact?.value);
          return p.value;
        },
      }),
      count: t.exposeInt('count', {
        description:
          'The daily values behind the point: 1 for a stored day; fewer than the ' +
          "bucket's days marks a partial bucket; 0 for a filled one.",
      }),
      extra: t.field({
        type: 'JSON',
        nullable: true,
        description:
          'Extra named fields of the point (etf-num-products breaks its count down), ' +
          'aggregated like the value; null for other metrics, filled buckets and ' +
          'transforms.',
        resolve: (p, _args, ctx, info) => {
          keepExact(ctx.splices, info, p.exact?.extra);
          return p.extra;
        },
      }),
      revisedAt: t.field({
        type: 'DateTime',
        nullable: true,
        description:
          'When the value served was written (the import or sync that wrote it); ' +
          'for a bucket, the newest write among its days; null for a filled bucket. ' +
          'With `asOf`, as it was then.',
        resolve: (p) => p.revisedAt,
      }),
      status: t.field({
        type: PointStatus,
        nullable: true,
        description:
          'PROVISIONAL, REVISED or FINAL; for a bucket, PROVISIONAL when any of its days is, else ' +
          'REVISED when any of them was revised; null for a filled bucket.',
        resolve: (p) => p.status as 'PROVISIONAL' | 'REVISED' | 'FINAL' | null,
      }),
    }),
  });
}

export type DataPointRef = ReturnType<typeof addDataPoint>;
