import { Repeater, SlidingBuffer } from 'graphql-yoga';
import type { Logger } from 'pino';
import { ApiError } from '../api/api-error.js';
import { canonicalInstant } from '../dates.js';
import type { ProjectDirectory } from '../db/project-directory.js';
import type { CancelSignal, Store } from '../db/store.js';
import { counted } from '../counted.js';

/** "Data landed": one series was written, over a range of days, by a transaction that has committed. */
export interface SeriesUpdate {
  /** The metric's REST name. */
  name: string;
  slug: string;
  /** The first and last day written. */
  from: string;
  to: string;
  /**
   * When the writing transaction wrote (when it took its turn to write): UTC with microseconds, as
   * the changes feed.
   */
  updatedAt: string;
}

/** Which updates a subscriber wants: one metric, some projects, or all of them. */
export interface SeriesUpdateFilter {
  name?: string | undefined;
  slugs?: readonly string[] | undefined;
}

export interface SubscriptionLimits {
  perKey: number;
  total: number;
}

/**
 * Live "data landed" events for subscribers of this process. The source is PostgreSQL's
 * NOTIFY on `series_updated`, which the point table's triggers send for every written
 * series and PostgreSQL delivers only after the writing transaction commits: whoever wrote
 * (this server, an import in another process, a sync, a command handed off to this
 * server), a subscriber hears of data it can already read. `publish` also takes updates
 * heard elsewhere (a fan-out between instances).
 */
export interface SeriesUpdates {
  /**
   * Starts listening; the directory names the project rows notifications carry. With
   * `beforeDelivery` (replicas), each write is delivered once it resolves: once the
   * replicas that serve reads have replayed it.
   */
  start(store: Store, directory: ProjectDirectory, beforeDelivery?: () => Promise<void>): Promise<void>;
  /**
   * The updates matching `filter` until `signal` aborts, the hub closes, or `stillAllowed`
   * (asked every {@link KEY_RECHECK_MS}) says the caller's key no longer counts; refused
   * past the caps.
   */
  subscribe(
    caller: string,
    filter: SeriesUpdateFilter,
    signal: CancelSignal,
    stillAllowed?: KeyCheck,
  ): AsyncIterable<SeriesUpdate>;
  publish(update: SeriesUpdate): void;
  /**
   * Calls `observer` for every write announced, whoever subscribes (with the update when
   * its notification could be read), and with `listening` true each time listening
   * (re)starts and false when it stops: caches drop what they hold.
   */
  observe(observer: (listening: boolean, update?: SeriesUpdate) => void): void;
  /** Subscriptions open now. */
  readonly open: number;
  /** Write announcements heard since start. */
  readonly heard: number;
  /** Ends every subscription and stops listening: a graceful shutdown does not wait for them. */
  close(): Promise<void>;
}

/**
 * Whether the key a subscription was opened with still counts: false once it is revoked. A
 * promise that rejects (the key store cannot be asked) keeps the subscription open.
 */
export type KeyCheck = () => boolean | Promise<boolean>;

/**
 * How often an open subscription's key is checked again. The verifier answers from its
 * cache (KEY_CACHE_MS, dropped at once in the process that revoked the key), so a revoked
 * key's streams end within a second of the key being refused to requests.
 */
export const KEY_RECHECK_MS = 1_000;

/** Updates a slow subscriber may have waiting before the oldest are dropped: a newer "data landed" is worth more. */
const QUEUE_LIMIT = 1000;

export function createSeriesUpdates(limits: SubscriptionLimits, logger: Logger): SeriesUpdates {
  const subscribers = new Set<Subscriber>();
  const observers: ((listening: boolean, update?: SeriesUpdate) => void)[] = [];
  const tell = (listening: boolean, update?: SeriesUpdate) => {
    for (const observer of observers) observer(listening, update);
  };
  const perKey = new Map<string, number>();
  let stopListening: (() => Promise<void>) | undefined;
  let closed = false;
  let heard = 0;

  /** Refuses a subscription past the key's cap or the service's. */
  const refuseOverCaps = (caller: string) => {
    const mine = perKey.get(caller) ?? 0;
    if (mine >= limits.perKey) {
      throw new ApiError(
        'rate-limited',
        `this key already holds ${counted(mine, 'open subscription')}, the most it may; close one first`,
        { headers: { 'retry-after': '1' } },
      );
    }
    if (subscribers.size >= limits.total) {
      throw new ApiError(
        'unavailable',
        `the service holds ${subscribers.size} open subscriptions, the most it may; try again shortly`,
        { headers: { 'retry-after': '5' } },
      );
    }
  };

  const publish = (update: SeriesUpdate) => {
    for (const subscriber of subscribers) if (matches(subscriber.filter, update)) subscriber.push(update);
  };

  return {
    async start(store, directory, beforeDelivery) {
      // Delivered in the order heard, each after the replicas caught up with it.
      let delivered = Promise.resolve();
      stopListening = await store.listen(
        'series_updated',
        (payload) => {
          heard += 1;
          const update = parseNotification(payload, directory);
          tell(true, update);
          if (update === undefined)
            logger.warn({ payload: payload.slice(0, 200) }, 'ignored a series_updated notification it could not read');
          if (beforeDelivery === undefined) {
            if (update !== undefined) publish(update);
            return;
          }
          delivered = delivered
            .then(beforeDelivery)
            .catch(() => {})
            .then(() => {
              tell(true); // answers kept while a replica still showed the old data go too
              if (update !== undefined) publish(update);
            });
        },
        (listening) => tell(listening),
      );
    },
    subscribe(caller, filter, signal, stillAllowed) {
      if (closed)
        throw new ApiError('unavailable', 'the service is shutting down; subscribe again shortly', {
          headers: { 'retry-after': '1' },
        });
      if (limits.perKey === 0) throw new ApiError('bad-request', 'live subscriptions are turned off on this service');
      refuseOverCaps(caller);
      // A slot is held from the first read of the stream to its end, not from this call:
      // an answer refused after the stream was made (a 406 to a client that cannot take
      // an event stream) never reads it nor ends it, and a slot taken here would be lost.
      return new Repeater<SeriesUpdate>(async (push, stop) => {
        refuseOverCaps(caller);
        perKey.set(caller, (perKey.get(caller) ?? 0) + 1);
        const subscriber: Subscriber = {
          filter,
          push: (update) => void push(update),
          end: () => stop(),
        };
        subscribers.add(subscriber);
        const onAbort = () => stop();
        signal.addEventListener('abort', onAbort, { once: true });
        // A revoked key hears nothing more: its streams end as its requests are refused.
        const recheck =
          stillAllowed === undefined
            ? undefined
            : setInterval(() => {
                Promise.resolve()
                  .then(stillAllowed)
                  .then(
                    (allowed) => {
                      if (!allowed) stop();
                    },
                    () => {},
                  );
              }, KEY_RECHECK_MS);
        recheck?.unref();
        if (signal.aborted || closed) stop();
        await stop;
        clearInterval(recheck);
        signal.removeEventListener('abort', onAbort);
        subscribers.delete(subscriber);
        const left = (perKey.get(caller) ?? 1) - 1;
        if (left === 0) perKey.delete(caller);
        else perKey.set(caller, left);
      }, new SlidingBuffer(QUEUE_LIMIT));
    },
    publish,
    observe(observer) {
      observers.push(observer);
    },
    get open() {
      return subscribers.size;
    },
    get heard() {
      return heard;
    },
    async close() {
      closed = true;
      tell(false);
      for (const subscriber of subscribers) subscriber.end();
      await stopListening?.().catch(() => {});
    },
  };
}

// Private

interface Subscriber {
  filter: SeriesUpdateFilter;
  push(update: SeriesUpdate): void;
  end(): void;
}

function matches(filter: SeriesUpdateFilter, update: SeriesUpdate): boolean {
  return (
    (filter.name === undefined || filter.name === update.name) &&
    (filter.slugs === undefined || filter.slugs.includes(update.slug))
  );
}

/** The triggers' payload: `{"project": <row id>, "from": date, "to": date, "at": timestamptz}`. */
function parseNotification(payload: string, directory: ProjectDirectory): SeriesUpdate | undefined {
  try {
    const note = JSON.parse(payload) as { project?: unknown; from?: unknown; to?: unknown; at?: unknown };
    const project = typeof note.project === 'number' ? directory.projectOf(note.project) : undefined;
    if (
      project === undefined ||
      typeof note.from !== 'string' ||
      typeof note.to !== 'string' ||
      typeof note.at !== 'string'
    )
      return undefined;
    // To the microsecond, as the changes feed: a Date would cut it to a millisecond before the write.
    const updatedAt = canonicalInstant(note.at);
    if (updatedAt === undefined) return undefined;
    return { name: project.metric, slug: project.slug, from: note.from, to: note.to, updatedAt };
  } catch {
    return undefined;
  }
}
