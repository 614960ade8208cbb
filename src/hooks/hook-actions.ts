import { ApiError, paramsError } from '../api/api-error.js';
import type { Catalog } from '../catalog/load-catalog.js';
import { changesRequestSchema, validateChangesRequest } from '../changes/changes-request.js';
import type { Queryable } from '../db/store.js';
import {
  countHooks,
  deleteHook,
  findHook,
  insertHook,
  listDeliveries,
  listHooks,
  replayStart,
  rewindHook,
  updateHook,
  type Delivery,
  type Hook,
} from './hook-queries.js';
import { validateHookInput } from './hook-input.js';
import { generateHookId, generateHookSecret } from './hook-signing.js';
import { resolveSafely } from './safe-address.js';

/** Hooks one key may have. */
export const MAX_HOOKS_PER_KEY = 20;
/** Changes one replay may cover: a replay from the beginning of a long log is refused. */
export const MAX_REPLAY_CHANGES = 1_000_000;
export const DEFAULT_DELIVERIES_LIMIT = 50;
export const MAX_DELIVERIES_LIMIT = 500;

/** What the hook actions need. `wake` tells the worker there is work. */
export interface HookContext {
  db: Queryable;
  catalog: Catalog;
  allowPrivate: boolean;
  wake?: () => void;
}

/** A new hook, with its secret: shown this once. */
export type CreatedHook = Hook & { secret: string };

/**
 * The actions on a key's hooks, the same for REST, GraphQL and the CLI. `owner` is the
 * key's stable id: a hook of another key is answered as one that does not exist (404).
 */
export const hookActions = {
  async create(ctx: HookContext, owner: string, input: unknown): Promise<CreatedHook> {
    const settings = validateHookInput(input, 'create', ctx.catalog, ctx.allowPrivate);
    await checkHookUrl(settings.url, ctx.allowPrivate);
    if ((await countHooks(ctx.db, owner)) >= MAX_HOOKS_PER_KEY)
      throw paramsError([
        { param: 'request', message: `this key has ${MAX_HOOKS_PER_KEY} hooks, the most it may; delete one first` },
      ]);
    const secret = generateHookSecret();
    const hook = await insertHook(ctx.db, { id: generateHookId(), owner, secret, settings });
    return { ...hook, secret };
  },
  list: (ctx: HookContext, owner: string): Promise<Hook[]> =>
    listHooks(ctx.db, owner).then((hooks) => hooks.map(({ owner: _owner, ...hook }) => hook)),
  async get(ctx: HookContext, owner: string, id: string): Promise<Hook> {
    return found(await findHook(ctx.db, owner, id), id);
  },
  async update(ctx: HookContext, owner: string, id: string, input: unknown): Promise<Hook> {
    const changes = validateHookInput(input, 'update', ctx.catalog, ctx.allowPrivate);
    found(await findHook(ctx.db, owner, id), id);
    if (changes.url !== undefined) await checkHookUrl(changes.url, ctx.allowPrivate);
    const hook = found(await updateHook(ctx.db, owner, id, changes), id);
    ctx.wake?.();
    return hook;
  },
  async remove(ctx: HookContext, owner: string, id: string): Promise<void> {
    if (!(await deleteHook(ctx.db, owner, id))) found(undefined, id);
  },
  async deliveries(
    ctx: HookContext,
    owner: string,
    id: string,
    page: { limit?: unknown; cursor?: unknown },
  ): Promise<{ deliveries: Delivery[]; next: string | undefined }> {
    const problems = [];
    const limit = page.limit === undefined ? DEFAULT_DELIVERIES_LIMIT : Number(page.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_DELIVERIES_LIMIT || !/^\d+$/.test(String(page.limit ?? 1)))
      problems.push({ param: 'limit', message: `expected a whole number from 1 to ${MAX_DELIVERIES_LIMIT}` });
    const cursor = page.cursor === undefined ? undefined : String(page.cursor);
    if (cursor !== undefined && !/^\d{1,18}$/.test(cursor))
      problems.push({
        param: 'cursor',
        message: 'not a cursor of this list; pass `next` of an earlier page unchanged',
      });
    if (problems.length > 0) throw paramsError(problems);
    found(await findHook(ctx.db, owner, id), id);
    return listDeliveries(ctx.db, id, limit, cursor);
  },
  /**
   * Moves the hook back so every change after a changes-feed `cursor`, or written at or
   * after `since`, is delivered again (after what it already has queued), at most
   * {@link MAX_REPLAY_CHANGES} of them.
   */
  async replay(ctx: HookContext, owner: string, id: string, input: unknown): Promise<Hook> {
    const body = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
    const problems = [];
    for (const key of Object.keys(body))
      if (key !== 'since' && key !== 'cursor')
        problems.push({ param: key, message: 'unknown field; expected since or cursor' });
    if ((body.since === undefined) === (body.cursor === undefined))
      problems.push({
        param: 'since',
        message: 'give either since (an RFC 3339 instant) or cursor (a changes-feed cursor)',
      });
    for (const key of ['since', 'cursor'] as const)
      if (body[key] !== undefined && typeof body[key] !== 'string')
        problems.push({ param: key, message: `expected a string, got ${JSON.stringify(body[key])}` });
    if (problems.length > 0) throw paramsError(problems);
    const { position } = validateChangesRequest(REPLAY_REQUEST, {
      since: body.since as string | undefined,
      cursor: body.cursor as string | undefined,
    });
    found(await findHook(ctx.db, owner, id), id);
    const start = await replayStart(ctx.db, position);
    if (start.count > MAX_REPLAY_CHANGES)
      throw paramsError([
        {
          param: body.since === undefined ? 'cursor' : 'since',
          message: `a replay covers at most ${MAX_REPLAY_CHANGES} changes; start later`,
        },
      ]);
    const hook = found(await rewindHook(ctx.db, id, start.afterSeq), id);
    ctx.wake?.();
    return hook;
  },
};

/** Refuses (400, `url`) a URL whose host does not resolve, or resolves to an address hooks may not reach. */
export async function checkHookUrl(url: string, allowPrivate: boolean): Promise<void> {
  const checked = await resolveSafely(new URL(url).hostname, allowPrivate);
  if ('refused' in checked) throw paramsError([{ param: 'url', message: checked.refused }]);
}

// Private

const REPLAY_REQUEST = changesRequestSchema({ since: 'since', limit: 'limit', cursor: 'cursor' });

function found<T>(hook: T | undefined, id: string): T {
  if (hook === undefined) throw new ApiError('not-found', `this key has no hook ${JSON.stringify(id.slice(0, 64))}`);
  return hook;
}
