import { z } from 'zod';
import {
  changesCost,
  changesRequestSchema,
  DEFAULT_CHANGES_LIMIT,
  MAX_CHANGES_LIMIT,
} from '../changes/changes-request.js';
import { readChanges, type Change, type ChangesPage } from '../changes/read-changes.js';
import type { Builder } from './builder.js';
import { exactNumber } from './exact-numbers.js';
import type { Enums } from './enums.js';

/**
 * The `changes` query field: the changes feed of `GET /v1/changes`, the same rows in the
 * same order. A page is a plain list with `endCursor` and `hasNextPage` rather than
 * Relay's edges: every row would carry the same kind of cursor, and a client resumes
 * from the page's end only.
 */
export function addChangesQuery(builder: Builder, refs: { enums: Enums }) {
  const ChangeRef = builder.objectRef<Change>('Change').implement({
    description: 'One write of one point: a value written, or a point removed (value null).',
    fields: (t) => ({
      name: t.field({ type: refs.enums.MetricName, description: 'The metric.', resolve: (c) => c.metric }),
      project: t.field({ type: refs.enums.Project, description: 'The project.', resolve: (c) => c.project }),
      slug: t.string({ description: "The project's slug as REST writes it.", resolve: (c) => c.project }),
      date: t.field({ type: 'Date', description: 'The day written.', resolve: (c) => c.date }),
      value: t.float({
        nullable: true,
        description: 'The value written; null when the write removed the point.',
        resolve: (c, _args, ctx, info) => (c.value === null ? null : exactNumber(ctx.splices, info, c.value)),
      }),
      extra: t.field({
        type: 'JSON',
        nullable: true,
        description:
          'The extra fields written with the value (metrics that have them); null when it has none, and for a removal.',
        resolve: (c) => (c.extra === null ? null : JSON.parse(c.extra)),
      }),
      updatedAt: t.field({
        type: 'DateTime',
        description:
          'When the write happened (when its transaction took its turn to write), ' +
          'in UTC with microseconds, e.g. 2026-06-30T12:00:00.123456Z, as in GET ' +
          '/v1/changes.',
        resolve: (c) => c.updatedAt,
      }),
    }),
  });

  const ChangeConnection = builder.objectRef<ChangesPage>('ChangeConnection').implement({
    description: 'A page of the changes feed.',
    fields: (t) => ({
      changes: t.field({ type: [ChangeRef], description: 'Writes in commit order.', resolve: (page) => page.changes }),
      endCursor: t.string({
        description:
          'Pass as `after` to continue: the next page while `hasNextPage`, else ' +
          'later writes once they land. Never skips or repeats a write.',
        resolve: (page) => page.next ?? page.cursor,
      }),
      hasNextPage: t.boolean({
        description: 'Whether more writes are waiting now.',
        resolve: (page) => page.next !== undefined,
      }),
    }),
  });

  builder.queryField('changes', (t) =>
    t.field({
      type: ChangeConnection,
      description:
        `Every write of a point since an instant, one entry per write (a value ` +
        `written twice appears twice), a page at a time: the feed of GET /v1/changes. ` +
        `Costs one rate-limit unit per ${DEFAULT_CHANGES_LIMIT} entries asked for.`,
      args: t.validate(
        {
          since: t.arg({ type: 'DateTime', required: true, description: 'Writes at or after this instant.' }),
          first: t.arg.int({
            required: false,
            defaultValue: DEFAULT_CHANGES_LIMIT,
            description: `Entries per page, 1 to ${MAX_CHANGES_LIMIT}.`,
          }),
          after: t.arg.string({
            required: false,
            description: 'The `endCursor` of an earlier page with the same `since`.',
          }),
        },
        CHANGES_ARGS,
      ),
      resolve: async (_root, { request }, ctx) => {
        await ctx.meter.charge(changesCost(request));
        return readChanges(ctx.services.reads, request);
      },
    }),
  );
}

// Private

/** The shared changes request schema over the `changes` field's arguments; the resolver gets `{ request }`. */
export const CHANGES_ARGS = z
  .preprocess(
    (args: { since: string; first?: number | null; after?: string | null }) => ({
      since: args.since,
      limit: args.first ?? undefined,
      cursor: args.after ?? undefined,
    }),
    changesRequestSchema({ since: 'since', limit: 'first', cursor: 'after' }),
  )
  .transform((request) => ({ request }));
