import type { Queryable } from '../db/store.js';
import type { HookFilter, HookRule } from './hook-input.js';

/** A hook as its worker reads it, under its lease. */
export interface HookState {
  id: string;
  url: string;
  secret: string;
  filter: HookFilter;
  rules: HookRule[];
  afterSeq: string;
  /** Deliveries waiting, delivered or not yet due. */
  pending: number;
  /** The last change committed so far. */
  lastSeq: string;
}

/** A delivery due now, the oldest its hook owes. */
export interface DueDelivery {
  seq: string;
  id: string;
  cursor: string;
  events: string;
  attempts: number;
}

/** A delivery to store: its id, the feed cursor after its last change, its events as JSON text. */
export interface NewDelivery {
  id: string;
  cursor: string;
  events: string;
}

/**
 * Leases up to `limit` active hooks that have work (changes after their position, or a
 * delivery due) and no live lease, for `leaseSeconds`. Rows another instance is claiming
 * at the same moment are skipped, so each hook is worked on by one instance at a time.
 */
export async function claimHooks(db: Queryable, limit: number, leaseSeconds: number): Promise<string[]> {
  const rows = await db.query<{ id: string }>(
    `update hook set lease_until = now() + make_interval(secs => $2)
     where id in (
       select h.id from hook h
       where h.active and (h.lease_until is null or h.lease_until < now())
         and (h.after_seq < (select coalesce(max(seq), 0) from point_change)
           or (select d.next_attempt_at from hook_delivery d
               where d.hook_id = h.id and d.state = 'pending' order by d.seq limit 1) <= now())
       order by h.lease_until nulls first, h.id
       limit $1
       for update skip locked)
     returning id`,
    [limit, leaseSeconds],
  );
  return rows.map((row) => row.id);
}

/** Ends this instance's lease of a hook, or keeps every instance off it for `pauseSeconds` (after an error). */
export async function releaseHook(db: Queryable, id: string, pauseSeconds = 0): Promise<void> {
  await db.query(
    `update hook set lease_until = case when $2 > 0 then now() + make_interval(secs => $2) end where id = $1`,
    [id, pauseSeconds],
  );
}

/** Ends every lease: on the embedded store one process delivers, so a lease left by a crash is void at start. */
export async function releaseAllHooks(db: Queryable): Promise<void> {
  await db.query('update hook set lease_until = null where lease_until is not null');
}

/** The hook, locked for the rest of `tx` (an update or replay waits), when it is active. */
export async function lockHookState(tx: Queryable, id: string): Promise<HookState | undefined> {
  const rows = await tx.query<HookState & { filter: string; rules: string }>(
    `select id, url, secret, filter::text as filter, rules::text as rules, after_seq::text as "afterSeq",
       (select count(*)::int from hook_delivery d where d.hook_id = h.id and d.state = 'pending') as pending,
       (select coalesce(max(seq), 0)::text from point_change) as "lastSeq"
     from hook h where id = $1 and active
     for update`,
    [id],
  );
  const row = rows[0];
  if (row === undefined) return undefined;
  return { ...row, filter: JSON.parse(row.filter) as HookFilter, rules: JSON.parse(row.rules) as HookRule[] };
}

/** Appends deliveries to a hook's queue, in order, and moves its position to `afterSeq`. */
export async function queueDeliveries(
  tx: Queryable,
  hookId: string,
  deliveries: readonly NewDelivery[],
  afterSeq: string | undefined,
): Promise<void> {
  if (deliveries.length > 0)
    await tx.query(
      `insert into hook_delivery (hook_id, id, cursor, events)
       select $1, d.id, d.cursor, d.events
       from rows from (jsonb_to_recordset($2::text::jsonb) as (id text, cursor text, events text))
         with ordinality as d (id, cursor, events, n)
       order by d.n`,
      [hookId, JSON.stringify(deliveries)],
    );
  if (afterSeq !== undefined)
    await tx.query('update hook set after_seq = $2::bigint where id = $1', [hookId, afterSeq]);
}

/**
 * The oldest deliveries the hook owes, up to `limit`, as far as they are due now: one that
 * is not due stops the run, since the later ones wait behind it (order per hook).
 */
export async function dueDeliveries(db: Queryable, hookId: string, limit: number): Promise<DueDelivery[]> {
  const rows = await db.query<DueDelivery & { due: boolean }>(
    // Ordered by the column, not by the text alias of the same name (which sorts "10" before "9").
    `select d.seq::text as seq, d.id, d.cursor, d.events, d.attempts, d.next_attempt_at <= now() as due
     from hook_delivery d where d.hook_id = $1 and d.state = 'pending' order by d.seq limit $2`,
    [hookId, limit],
  );
  const firstNotDue = rows.findIndex((row) => !row.due);
  return firstNotDue < 0 ? rows : rows.slice(0, firstNotDue);
}

/** Records a successful attempt, and renews the hook's lease. */
export async function recordDelivered(
  db: Queryable,
  seq: string,
  status: number,
  hookId: string,
  leaseSeconds: number,
): Promise<void> {
  await db.query(
    `with done as (
       update hook_delivery set state = 'delivered', attempts = attempts + 1, last_status = $2, last_error = null,
         finished_at = now()
       where seq = $1::bigint)
     update hook set lease_until = now() + make_interval(secs => $4) where id = $3`,
    [seq, status, hookId, leaseSeconds],
  );
}

/**
 * Records a failed attempt: the delivery is tried again after `retrySeconds`, but never
 * later than `failAfterSeconds` after it was made; an attempt at or past that time fails it
 * for good. Returns whether it failed for good.
 */
export async function recordFailure(
  db: Queryable,
  seq: string,
  outcome: { status: number | null; error: string | null },
  retrySeconds: number,
  failAfterSeconds: number,
): Promise<boolean> {
  const rows = await db.query<{ state: string }>(
    `update hook_delivery set attempts = attempts + 1, last_status = $2, last_error = $3,
       state = case when now() >= created_at + make_interval(secs => $5) then 'failed' else 'pending' end,
       finished_at = case when now() >= created_at + make_interval(secs => $5) then now() end,
       next_attempt_at = least(now() + make_interval(secs => $4), created_at + make_interval(secs => $5))
     where seq = $1::bigint
     returning state`,
    [seq, outcome.status, outcome.error, retrySeconds, failAfterSeconds],
  );
  return rows[0]?.state === 'failed';
}

/**
 * Seconds until the oldest pending delivery of some active hook that no instance holds is
 * due (0 if one is); undefined when none waits. Only each hook's oldest counts (the rest
 * wait behind it), and a held hook is its holder's to watch: counting either would wake
 * the worker again and again for nothing it may do.
 */
export async function secondsToNextDue(db: Queryable): Promise<number | undefined> {
  const rows = await db.query<{ seconds: number | null }>(
    `select greatest(0, extract(epoch from min(head.next_attempt_at) - now()))::float8 as seconds
     from hook h
     cross join lateral (
       select d.next_attempt_at from hook_delivery d
       where d.hook_id = h.id and d.state = 'pending' order by d.seq limit 1) head
     where h.active and (h.lease_until is null or h.lease_until < now())`,
  );
  return rows[0]?.seconds ?? undefined;
}
