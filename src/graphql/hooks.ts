import { ApiError } from '../api/api-error.js';
import { hookActions, type HookContext } from '../hooks/hook-actions.js';
import type { Delivery, Hook } from '../hooks/hook-queries.js';
import type { HookRule } from '../hooks/hook-input.js';
import type { Builder, GraphqlContext } from './builder.js';

/**
 * Webhooks over GraphQL: `hooks` and `hook(id)`, and the mutations `createHook`,
 * `updateHook`, `deleteHook` and `replayHook`, through the same actions, checks and
 * messages as `/v1/hooks` (a refused argument is BAD_USER_INPUT naming it as REST does:
 * `url`, `rules[0].type`). A key sees only its own hooks. Answers that name a key's hooks
 * are never kept in the shared response cache.
 */
export function addHooks(builder: Builder) {
  const RuleRef = builder.objectRef<HookRule>('HookRule').implement({
    description: 'What fires a hook: landed, revision (minAbsPercent), threshold (op, value) or late (graceMinutes).',
    fields: (t) => ({
      type: t.string({ description: 'landed, revision, threshold or late.', resolve: (r) => r.type }),
      minAbsPercent: t.float({ nullable: true, resolve: (r) => (r.type === 'revision' ? r.minAbsPercent : null) }),
      op: t.string({ nullable: true, resolve: (r) => (r.type === 'threshold' ? r.op : null) }),
      value: t.float({ nullable: true, resolve: (r) => (r.type === 'threshold' ? r.value : null) }),
      graceMinutes: t.int({ nullable: true, resolve: (r) => (r.type === 'late' ? r.graceMinutes : null) }),
    }),
  });
  const FilterRef = builder.objectRef<Hook['filter']>('HookFilter').implement({
    description: 'Which series a hook hears of; a list that is null means all.',
    fields: (t) => ({
      metrics: t.stringList({ nullable: true, resolve: (f) => f.metrics ?? null }),
      projects: t.stringList({ nullable: true, resolve: (f) => f.projects ?? null }),
    }),
  });
  const DeliveryRef = builder.objectRef<Delivery>('HookDelivery').implement({
    description: 'One delivery: the events of one commit, and how its attempts went.',
    fields: (t) => ({
      id: t.exposeString('id', { description: 'Its webhook-id header, the same for every attempt.' }),
      state: t.exposeString('state', { description: 'pending, delivered or failed.' }),
      attempts: t.exposeInt('attempts', { description: 'Tries made, the successful one included.' }),
      lastStatus: t.int({ nullable: true, resolve: (d) => d.lastStatus }),
      lastError: t.string({ nullable: true, resolve: (d) => d.lastError }),
      nextAttemptAt: t.field({ type: 'DateTime', nullable: true, resolve: (d) => d.nextAttemptAt }),
      createdAt: t.field({ type: 'DateTime', resolve: (d) => d.createdAt }),
      finishedAt: t.field({ type: 'DateTime', nullable: true, resolve: (d) => d.finishedAt }),
      cursor: t.exposeString('cursor', { description: 'The changes-feed cursor after its last change.' }),
      events: t.field({ type: 'JSON', description: 'The events, as in the body.', resolve: (d) => d.events }),
    }),
  });
  const DeliveryPageRef = builder
    .objectRef<{ deliveries: Delivery[]; next: string | undefined }>('HookDeliveryPage')
    .implement({
      fields: (t) => ({
        deliveries: t.field({ type: [DeliveryRef], description: 'Newest first.', resolve: (p) => p.deliveries }),
        endCursor: t.string({ nullable: true, description: 'Pass as `after` for older ones.', resolve: (p) => p.next }),
        hasNextPage: t.boolean({ resolve: (p) => p.next !== undefined }),
      }),
    });
  const HookRef = builder.objectRef<Hook>('Hook').implement({
    description: 'A webhook: where events are posted and which rules make them.',
    fields: (t) => ({
      id: t.exposeID('id'),
      url: t.exposeString('url'),
      description: t.exposeString('description'),
      filter: t.field({ type: FilterRef, resolve: (h) => h.filter }),
      rules: t.field({ type: [RuleRef], resolve: (h) => h.rules }),
      active: t.exposeBoolean('active'),
      createdAt: t.field({ type: 'DateTime', resolve: (h) => h.createdAt }),
      cursor: t.exposeString('cursor', { description: "A changes-feed cursor at the hook's position." }),
      deliveries: t.field({
        type: DeliveryPageRef,
        description: 'Its deliveries, newest first.',
        args: { first: t.arg.int({ required: false }), after: t.arg.string({ required: false }) },
        resolve: (h, args, ctx) =>
          hookActions.deliveries(hookContext(ctx), ctx.caller, h.id, {
            limit: args.first ?? undefined,
            cursor: args.after ?? undefined,
          }),
      }),
    }),
  });
  const CreatedRef = builder.objectRef<Hook & { secret: string }>('CreatedHook').implement({
    fields: (t) => ({
      hook: t.field({ type: HookRef, resolve: (h) => h }),
      secret: t.exposeString('secret', { description: 'The signing secret (whsec_…): shown this once.' }),
    }),
  });

  const RuleInput = builder.inputType('HookRuleInput', {
    fields: (t) => ({
      type: t.string({ required: true, description: 'landed, revision, threshold or late.' }),
      minAbsPercent: t.float({ required: false }),
      op: t.string({ required: false, description: '>, >=, < or <=.' }),
      value: t.float({ required: false }),
      graceMinutes: t.int({ required: false }),
    }),
  });
  const FilterInput = builder.inputType('HookFilterInput', {
    fields: (t) => ({
      metrics: t.stringList({ required: false }),
      projects: t.stringList({ required: false }),
    }),
  });
  const settings = {
    description: (t: InputFields) => t.string({ required: false }),
    filter: (t: InputFields) => t.field({ type: FilterInput, required: false }),
  };
  const HookInput = builder.inputType('HookInput', {
    fields: (t) => ({
      url: t.string({ required: true }),
      description: settings.description(t),
      filter: settings.filter(t),
      rules: t.field({ type: [RuleInput], required: true }),
    }),
  });
  const HookPatch = builder.inputType('HookPatch', {
    fields: (t) => ({
      url: t.string({ required: false }),
      description: settings.description(t),
      filter: settings.filter(t),
      rules: t.field({ type: [RuleInput], required: false }),
      active: t.boolean({ required: false }),
    }),
  });

  builder.queryField('hooks', (t) =>
    t.field({
      type: [HookRef],
      description: "This key's webhooks.",
      resolve: (_root, _args, ctx) => hookActions.list(hookContext(ctx), ctx.caller),
    }),
  );
  builder.queryField('hook', (t) =>
    t.field({
      type: HookRef,
      nullable: true,
      description: "One of this key's webhooks; null for any other id.",
      args: { id: t.arg.id({ required: true }) },
      resolve: (_root, args, ctx) =>
        hookActions.get(hookContext(ctx), ctx.caller, String(args.id)).catch((error: unknown) => {
          if (error instanceof ApiError && error.kind === 'not-found') return null;
          throw error;
        }),
    }),
  );
  builder.mutationField('createHook', (t) =>
    t.field({
      type: CreatedRef,
      description: 'A new webhook (at most 20 per key); its secret is shown this once.',
      args: { input: t.arg({ type: HookInput, required: true }) },
      resolve: (_root, args, ctx) => hookActions.create(hookContext(ctx), ctx.caller, withoutNulls(args.input)),
    }),
  );
  builder.mutationField('updateHook', (t) =>
    t.field({
      type: HookRef,
      description: 'Changes the settings given; NOT_FOUND for a hook this key does not have.',
      args: { id: t.arg.id({ required: true }), input: t.arg({ type: HookPatch, required: true }) },
      resolve: (_root, args, ctx) =>
        hookActions.update(hookContext(ctx), ctx.caller, String(args.id), withoutNulls(args.input)),
    }),
  );
  builder.mutationField('deleteHook', (t) =>
    t.boolean({
      description: 'Deletes a webhook and its deliveries.',
      args: { id: t.arg.id({ required: true }) },
      resolve: async (_root, args, ctx) => {
        await hookActions.remove(hookContext(ctx), ctx.caller, String(args.id));
        return true;
      },
    }),
  );
  builder.mutationField('replayHook', (t) =>
    t.field({
      type: HookRef,
      description: 'Delivers again every event after a changes-feed `cursor`, or written at or after `since`.',
      args: {
        id: t.arg.id({ required: true }),
        since: t.arg({ type: 'DateTime', required: false }),
        cursor: t.arg.string({ required: false }),
      },
      resolve: (_root, args, ctx) =>
        hookActions.replay(
          hookContext(ctx),
          ctx.caller,
          String(args.id),
          withoutNulls({ since: args.since, cursor: args.cursor }),
        ),
    }),
  );
}

// Private

type InputFields = Parameters<Parameters<Builder['inputType']>[1]['fields']>[0];

/** The hook actions on the request's behalf; its answer is the key's own, never shared. */
function hookContext(ctx: GraphqlContext): HookContext {
  ctx.personal();
  return {
    db: ctx.services.store,
    catalog: ctx.services.catalog,
    allowPrivate: ctx.services.config.hooksAllowPrivate,
    wake: () => ctx.services.hooks.wake(),
  };
}

/** GraphQL's nulls (a field given as null) as fields left out, as REST's JSON would leave them. */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== null && v !== undefined)
      .map(([k, v]) => [k, withoutNulls(v)]),
  );
}
