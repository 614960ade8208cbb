import { z } from 'zod';
import type { Catalog } from '../catalog/load-catalog.js';
import type { Store } from '../db/store.js';
import { loadProjectIds, projectKey, syncCatalog } from '../db/sync-catalog.js';
import { readSyncCursor, saveSyncCursor } from '../db/sync-cursors.js';
import { removePoints, upsertPoints, type PointRow, type RemovedPoint, type WriteCount } from '../db/write-points.js';
import { validateRow } from '../import/validate-row.js';
import { UpstreamError, type UpstreamClient } from './upstream-client.js';

/** Which series a sync covers: undefined lists mean all. */
export interface SyncScope {
  metrics?: readonly string[] | undefined;
  projects?: readonly string[] | undefined;
}

/** What following the feed did. */
export type FeedOutcome =
  /** First run for this upstream and scope: the feed's end was found and kept; nothing was applied. */
  | { kind: 'started' }
  /** `series`: the project rows of the entries applied, when a page wrote anything. */
  | { kind: 'followed'; entries: number; written: WriteCount; series: Set<number>; refused: string[] }
  /** The upstream has no changes feed (a 404): only the range copy runs. */
  | { kind: 'unavailable'; reason: string }
  /**
   * The upstream refused the position kept (its feed was started anew, say): the feed's end was
   * found and kept again.
   */
  | { kind: 'restarted'; reason: string };

/** Entries asked for per page: the feed's most. */
const PAGE_SIZE = 10_000;

/**
 * How far back the first run starts looking for the feed's end: a write is listed by the
 * time its transaction took its turn, which may be before it committed, and the two
 * clocks may differ. Everything written since then is found again by the range copy.
 */
const FIRST_LOOK_BACK_MS = 24 * 3600 * 1000;

/**
 * Applies the upstream's changes feed (`GET /v1/changes`) from where the last run for this
 * upstream and scope left it: every revision and removal upstream, however old the day it
 * touched, which the range copy (the last days of each series only) cannot see. Each page
 * is written in one transaction through the import's checks and write path, with the
 * cursor after it, so a run stopped part-way resumes exactly there; entries for one day
 * within a page are applied as their last one. An entry outside the scope or the local
 * catalog is passed over; one that fails the import's checks is reported and passed over.
 *
 * The first run applies nothing: it walks to the feed's end and keeps that position, and
 * the range copy that follows brings everything before it.
 */
export async function followChanges(
  store: Store,
  catalog: Catalog,
  client: UpstreamClient,
  scope: SyncScope,
  signal: AbortSignal,
  progress: (entries: number) => void,
): Promise<FeedOutcome> {
  const names = (list: readonly string[] | undefined) =>
    list === undefined ? '*' : [...new Set(list)].sort().join(',');
  const key = `${client.baseUrl} metrics=${names(scope.metrics)} projects=${names(scope.projects)}`;
  const saved = await readSyncCursor(store, key);
  const get = async (query: string) => {
    try {
      return readPage(await client.get(`/v1/changes?${query}&limit=${PAGE_SIZE}`, signal), client.baseUrl);
    } catch (error) {
      if (error instanceof UpstreamError && (error.status === 404 || (error.status === 400 && saved !== undefined)))
        return error;
      throw error;
    }
  };
  if (saved === undefined) {
    const found = await walkToEnd(get);
    if (found instanceof UpstreamError) return { kind: 'unavailable', reason: found.message };
    await saveSyncCursor(store, key, found);
    return { kind: 'started' };
  }
  await syncCatalog(store, catalog);
  const ids = await loadProjectIds(store);
  const outcome = {
    entries: 0,
    written: { added: 0, revised: 0, removed: 0 },
    series: new Set<number>(),
    refused: [] as string[],
  };
  let query = `cursor=${saved}`;
  for (;;) {
    const page = await get(query);
    if (page instanceof UpstreamError) {
      if (page.status === 404) return { kind: 'unavailable', reason: page.message };
      const found = await walkToEnd(get);
      if (found instanceof UpstreamError) throw found;
      await saveSyncCursor(store, key, found);
      return { kind: 'restarted', reason: page.message };
    }
    const { upserts, removals } = pageWrites(page, catalog, scope, ids, outcome.refused);
    const written = await store.transaction(async (tx) => {
      const upserted = await upsertPoints(tx, upserts);
      const removed = await removePoints(tx, removals);
      await saveSyncCursor(tx, key, page.cursor);
      return { added: upserted.added, revised: upserted.revised, removed: removed.removed };
    });
    outcome.entries += page.changes.length;
    outcome.written.added += written.added;
    outcome.written.revised += written.revised;
    outcome.written.removed += written.removed;
    if (written.added + written.revised + written.removed > 0)
      for (const row of [...upserts, ...removals]) outcome.series.add(row.projectId);
    progress(outcome.entries);
    if (page.next === undefined) return { kind: 'followed', ...outcome };
    query = `cursor=${page.next}`;
  }
}

// Private

/**
 * The feed's end as a cursor, from {@link FIRST_LOOK_BACK_MS} ago (the entries on the way are not
 * applied); or the upstream's refusal.
 */
async function walkToEnd(get: (query: string) => Promise<FeedPage | UpstreamError>): Promise<string | UpstreamError> {
  let page = await get(`since=${new Date(Date.now() - FIRST_LOOK_BACK_MS).toISOString()}`);
  while (!(page instanceof UpstreamError) && page.next !== undefined) page = await get(`cursor=${page.next}`);
  return page instanceof UpstreamError ? page : page.cursor;
}

const FEED_PAGE = z.object({
  changes: z.array(
    z.object({
      metric: z.string(),
      project: z.string(),
      date: z.string(),
      value: z.string().nullable(),
      extra: z.record(z.string(), z.unknown()).optional(),
    }),
  ),
  next: z.string().optional(),
  cursor: z.string(),
});

type FeedPage = z.infer<typeof FEED_PAGE>;

/**
 * A feed page, each value kept as the exact decimal text it was sent as (a JavaScript
 * number would round digits past the 17th): the feed writes only numbers or null after
 * `"value":`, and no extra field is called `value`, so quoting them first is safe.
 */
function readPage(body: string, baseUrl: string): FeedPage {
  let json: unknown;
  try {
    json = JSON.parse(body.replace(/"value":(-?[0-9][0-9.eE+-]*)/g, '"value":"$1"'));
  } catch {
    throw new UpstreamError(
      `${baseUrl}/v1/changes did not answer JSON (it began ${JSON.stringify(body.slice(0, 40))})`,
    );
  }
  const parsed = FEED_PAGE.safeParse(json);
  if (!parsed.success)
    throw new UpstreamError(
      `${baseUrl}/v1/changes is not a changes feed page ` +
        `(${parsed.error.issues[0]!.path.join('.')}: ${parsed.error.issues[0]!.message}` +
        `)`,
    );
  return parsed.data;
}

/** The writes of a page in scope, the last entry of each day only; refusals are added to `refused`. */
function pageWrites(
  page: FeedPage,
  catalog: Catalog,
  scope: SyncScope,
  ids: ReadonlyMap<string, number>,
  refused: string[],
): { upserts: PointRow[]; removals: RemovedPoint[] } {
  const last = new Map<string, PointRow | RemovedPoint>();
  for (const entry of page.changes) {
    if (scope.metrics !== undefined && !scope.metrics.includes(entry.metric)) continue;
    if (scope.projects !== undefined && !scope.projects.includes(entry.project)) continue;
    const projectId = ids.get(projectKey(entry.metric, entry.project));
    if (projectId === undefined || catalog.byName.get(entry.metric)?.projects.includes(entry.project) !== true)
      continue;
    const check = validateRow(catalog, {
      metric: entry.metric,
      project: entry.project,
      date: entry.date,
      value: entry.value,
      extra: entry.extra,
    });
    if (!check.ok) {
      refused.push(`${entry.metric}/${entry.project} ${entry.date.slice(0, 10)}: ${check.error}`);
      continue;
    }
    const { day, value, extra } = check.row;
    last.set(`${projectId} ${day}`, value === null ? { projectId, day } : { projectId, day, value, extra });
  }
  const writes = [...last.values()];
  return {
    upserts: writes.filter((w): w is PointRow => 'value' in w),
    removals: writes.filter((w) => !('value' in w)),
  };
}
