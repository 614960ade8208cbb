import { encodeCursor, type FeedPosition } from '../changes/changes-request.js';
import type { Queryable } from '../db/store.js';
import type { HookChanges, HookFilter, HookRule, HookSettings } from './hook-input.js';

/** A hook as the API shows it: never its secret, which is shown once, at creation. */
export interface Hook extends HookSettings {
  id: string;
  active: boolean;
  createdAt: string;
  /** A changes-feed cursor at the hook's position: what it has turned into deliveries so far. */
  cursor: string;
}

/** One delivery as the deliveries list shows it. */
export interface Delivery {
  /** The `webhook-id` header of every attempt. */
  id: string;
  state: 'pending' | 'delivered' | 'failed';
  /** Tries made, the successful one included. */
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  /** When the next try is due; null once delivered or failed. */
  nextAttemptAt: string | null;
  createdAt: string;
  finishedAt: string | null;
  cursor: string;
  events: unknown[];
}

/** The feed position a hook's cursor encodes: every change after `seq`, whenever written. */
export function hookCursor(afterSeq: string): string {
  return encodeCursor({ since: FEED_START, seq: afterSeq });
}

/** Hooks `owner` has. */
export async function countHooks(db: Queryable, owner: string): Promise<number> {
  const rows = await db.query<{ n: number }>('select count(*)::int as n from hook where owner = $1', [owner]);
  return rows[0]!.n;
}

/** Stores a new hook positioned after the last change committed so far: it hears of later writes. */
export async function insertHook(
  db: Queryable,
  hook: { id: string; owner: string; secret: string; settings: HookSettings },
): Promise<Hook> {
  const { settings } = hook;
  const rows = await db.query<HookRow>(
    `insert into hook (id, owner, url, description, filter, rules, secret, after_seq)
     values ($1, $2, $3, $4, $5::text::jsonb, $6::text::jsonb, $7, (select coalesce(max(seq), 0) from point_change))
     returning ${HOOK_COLUMNS}`,
    [
      hook.id,
      hook.owner,
      settings.url,
      settings.description,
      JSON.stringify(settings.filter),
      JSON.stringify(settings.rules),
      hook.secret,
    ],
  );
  return toHook(rows[0]!);
}

/** The hooks of `owner` (every hook when undefined, for the CLI), oldest first. */
export async function listHooks(db: Queryable, owner: string | undefined): Promise<(Hook & { owner: string })[]> {
  const rows = await db.query<HookRow & { owner: string }>(
    `select ${HOOK_COLUMNS}, owner from hook where $1::text is null or owner = $1 order by created_at, id`,
    [owner ?? null],
  );
  return rows.map((row) => ({ ...toHook(row), owner: row.owner }));
}

/** The hook `id` when `owner` has it (any owner when undefined). */
export async function findHook(db: Queryable, owner: string | undefined, id: string): Promise<Hook | undefined> {
  const rows = await db.query<HookRow>(
    `select ${HOOK_COLUMNS} from hook where id = $1 and ($2::text is null or owner = $2)`,
    [id, owner ?? null],
  );
  return rows[0] === undefined ? undefined : toHook(rows[0]);
}

/** Applies `changes` to `owner`'s hook; undefined when it has no such hook. */
export async function updateHook(
  db: Queryable,
  owner: string,
  id: string,
  changes: HookChanges,
): Promise<Hook | undefined> {
  const rows = await db.query<HookRow>(
    `update hook set
       url = coalesce($3, url),
       description = coalesce($4, description),
       filter = coalesce($5::text::jsonb, filter),
       rules = coalesce($6::text::jsonb, rules),
       active = coalesce($7, active)
     where id = $1 and owner = $2
     returning ${HOOK_COLUMNS}`,
    [
      id,
      owner,
      changes.url ?? null,
      changes.description ?? null,
      changes.filter === undefined ? null : JSON.stringify(changes.filter),
      changes.rules === undefined ? null : JSON.stringify(changes.rules),
      changes.active ?? null,
    ],
  );
  return rows[0] === undefined ? undefined : toHook(rows[0]);
}

/** Deletes a hook and its deliveries (any owner's when `owner` is undefined); false when there was none. */
export async function deleteHook(db: Queryable, owner: string | undefined, id: string): Promise<boolean> {
  const rows = await db.query<{ id: string }>(
    'delete from hook where id = $1 and ($2::text is null or owner = $2) returning id',
    [id, owner ?? null],
  );
  return rows.length > 0;
}

/** A page of a hook's deliveries, newest first, before the delivery numbered `before` when given. */
export async function listDeliveries(
  db: Queryable,
  hookId: string,
  limit: number,
  before: string | undefined,
): Promise<{ deliveries: Delivery[]; next: string | undefined }> {
  const rows = await db.query<DeliveryRow>(
    `select d.seq::text as seq, d.id, d.state, d.attempts, d.last_status as "lastStatus", d.last_error as "lastError",
       case when d.state = 'pending' then ${instant('d.next_attempt_at')} end as "nextAttemptAt",
       ${instant('d.created_at')} as "createdAt", ${instant('d.finished_at')} as "finishedAt",
       d.cursor, d.events
     from hook_delivery d
     where d.hook_id = $1 and ($2::bigint is null or d.seq < $2::bigint)
     order by d.seq desc
     limit $3`,
    [hookId, before ?? null, limit + 1],
  );
  const page = rows.slice(0, limit);
  return {
    deliveries: page.map(({ seq: _seq, events, ...rest }) => ({ ...rest, events: JSON.parse(events) as unknown[] })),
    next: rows.length > limit ? page.at(-1)!.seq : undefined,
  };
}

/**
 * Where a replay from `position` (a changes-feed position) starts, as the feed reads it:
 * after the change the cursor names, or before the first change written at or after its
 * `since`; past every change when there is none. Also how many changes lie after it.
 */
export async function replayStart(db: Queryable, position: FeedPosition): Promise<{ afterSeq: string; count: number }> {
  const rows = await db.query<{ after: string; count: number }>(
    `with start as (
       select coalesce(
         (select c.seq from point_change c where c.seq = $2::bigint and c.written_at >= $1::text::timestamptz),
         (select greatest(f.seq - 1, $2::bigint) from point_change f
           where f.written_at >= $1::text::timestamptz order by f.written_at, f.seq limit 1),
         (select coalesce(max(seq), 0) from point_change)) as after)
     select after::text as after,
       (select count(*)::int from (select 1 from point_change where seq > after limit 1000001) n) as count
     from start`,
    [position.since, position.seq],
  );
  return { afterSeq: rows[0]!.after, count: rows[0]!.count };
}

/** Moves a hook back to `afterSeq`: every change after it is turned into deliveries again. */
export async function rewindHook(db: Queryable, hookId: string, afterSeq: string): Promise<Hook | undefined> {
  const rows = await db.query<HookRow>(
    `update hook set after_seq = $2::bigint where id = $1 returning ${HOOK_COLUMNS}`,
    [hookId, afterSeq],
  );
  return rows[0] === undefined ? undefined : toHook(rows[0]);
}

// Private

/** The earliest instant a cursor may name: a hook's cursor counts every change after its sequence. */
const FEED_START = '0001-01-01T00:00:00.000000Z';

const instant = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

const HOOK_COLUMNS = `id, url, description, filter::text as filter, rules::text as rules, active,
  ${instant('created_at')} as "createdAt", after_seq::text as "afterSeq"`;

interface HookRow {
  id: string;
  url: string;
  description: string;
  filter: string;
  rules: string;
  active: boolean;
  createdAt: string;
  afterSeq: string;
}

interface DeliveryRow extends Omit<Delivery, 'events'> {
  seq: string;
  events: string;
}

function toHook(row: HookRow): Hook {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    filter: JSON.parse(row.filter) as HookFilter,
    rules: JSON.parse(row.rules) as HookRule[],
    active: row.active,
    createdAt: row.createdAt,
    cursor: hookCursor(row.afterSeq),
  };
}

/** The owner id (KeyIdentity.id) of the active stored key named `name`, as requests with that key carry it. */
export async function ownerOfKeyName(db: Queryable, name: string): Promise<string | undefined> {
  const rows = await db.query<{ owner: string }>(
    `select 'db:' || left(encode(key_hash, 'hex'), 12) as owner from api_key where name = $1 and revoked_at is null`,
    [name],
  );
  return rows[0]?.owner;
}

/** The names of stored keys by owner id, for listings. */
export async function keyNamesByOwner(db: Queryable): Promise<Map<string, string>> {
  const rows = await db.query<{ owner: string; name: string }>(
    `select 'db:' || left(encode(key_hash, 'hex'), 12) as owner, name from api_key`,
  );
  return new Map(rows.map((row) => [row.owner, row.name]));
}
