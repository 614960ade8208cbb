import { guardUnavailable } from '../api/unavailable.js';
import type { Catalog } from '../catalog/load-catalog.js';
import { priceTriangleRead } from '../limits/history-cost.js';
import { readTriangle, type TriangleRow } from '../revisions/read-triangle.js';
import { triangleDays, validateTriangleRequest } from '../revisions/triangle-request.js';
import type { Builder } from './builder.js';
import type { Enums } from './enums.js';
import { keepExact } from './exact-numbers.js';

/** The `RevisionRow` type and the `revisions` query field: REST's `/v1/revisions/<metric>`. */
export function addRevisionsQuery(builder: Builder, refs: { catalog: Catalog; enums: Enums }) {
  const number = (text: string | null) => (text === null ? null : Number(text));
  // A value a double would change is written as PostgreSQL's text (exact-numbers.ts), as points' values are.
  const inexact = (text: string | null) => text !== null && String(Number(text)) !== text;
  const RevisionRow = builder.objectRef<TriangleRow>('RevisionRow').implement({
    description: 'One day of a revision triangle: its value at each lag asked for, and how it was revised.',
    fields: (t) => ({
      date: t.field({ type: 'Date', description: 'The day.', resolve: (r) => r.date }),
      firstWrittenAt: t.field({
        type: 'DateTime',
        description: 'When the day was first written, with microseconds: passed back as `asOf`, it reads that write.',
        resolve: (r) => r.firstWrittenAt,
      }),
      values: t.field({
        type: ['Float'],
        nullable: { list: false, items: true },
        description: 'One per lag asked for: the value standing at the end of UTC day date + lag; null where none.',
        resolve: (r, _args, ctx, info) => {
          if (r.values.some(inexact)) keepExact(ctx.splices, info, `[${r.values.map((v) => v ?? 'null').join(',')}]`);
          return r.values.map(number);
        },
      }),
      latest: t.float({
        nullable: true,
        description: 'The value served now; null when the day was removed.',
        resolve: (r, _args, ctx, info) => {
          if (inexact(r.latest)) keepExact(ctx.splices, info, r.latest!);
          return number(r.latest);
        },
      }),
      revisionCount: t.int({
        description: 'Writes after the first (revisions and removals); 0 for a day never revised.',
        resolve: (r) => r.revisionCount,
      }),
      maxAbsRevisionPercent: t.float({
        nullable: true,
        description:
          'The largest change of any revision relative to the value it replaced, in percent; null when that was 0 ' +
          '(or the day was never revised).',
        resolve: (r) => r.maxAbsRevisionPercent,
      }),
    }),
  });

  builder.queryField('revisions', (t) =>
    t.field({
      type: [RevisionRow],
      description:
        "One project's revision triangle (REST GET /v1/revisions/<metric>): a row per day ever written, " +
        'ascending. At most 3660 days and 16 lags (each 0 to 3650, strictly increasing). Priced by its ' +
        'cells and the history rows it reads.',
      args: {
        name: t.arg({ type: refs.enums.MetricName, required: true, description: 'The metric.' }),
        project: t.arg({ type: refs.enums.Project, required: true, description: 'One project of the metric.' }),
        from: t.arg({ type: 'Date', required: true, description: 'First day, inclusive.' }),
        to: t.arg({ type: 'Date', required: true, description: 'Last day, inclusive.' }),
        lags: t.arg.intList({ required: true, description: 'Days after each day, e.g. [0, 1, 7, 30].' }),
      },
      resolve: async (_root, args, ctx) => {
        const request = validateTriangleRequest({
          metric: refs.catalog.metric(args.name),
          project: args.project,
          from: args.from,
          to: args.to,
          lags: args.lags,
        });
        const { reads } = ctx.services;
        const projectId = ctx.directory.idOf(request.metric.name, request.slug) ?? -1;
        await ctx.meter.charge(await priceTriangleRead(reads, request, triangleDays(request), projectId, ctx.signal));
        return guardUnavailable(() =>
          readTriangle(reads, projectId, request.from, request.to, request.lags, ctx.signal),
        );
      },
    }),
  );
}
