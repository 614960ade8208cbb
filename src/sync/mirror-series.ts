import type { Catalog } from '../catalog/load-catalog.js';
import { z } from 'zod';
import { fromEpochDay, isIsoDate, toEpochDay } from '../dates.js';
import type { Queryable, Store } from '../db/store.js';
import { readStoredSpans } from '../db/read-coverage.js';
import { projectKey, syncCatalog } from '../db/sync-catalog.js';
import { removePointsExcept, upsertPoints, type PointRow, type WriteCount } from '../db/write-points.js';
import { validateRow } from '../import/validate-row.js';
import { UpstreamError, type UpstreamClient } from './upstream-client.js';

/** What to mirror and from where to start. */
export interface MirrorOptions {
  /** Only these metrics / slugs; undefined means all that both sides know. */
  metrics?: readonly string[] | undefined;
  projects?: readonly string[] | undefined;
  /** Fetch from this day on for every series, instead of from the local last day. */
  since?: string | undefined;
  /** Days before the local last day fetched again, so late revisions upstream arrive too. */
  overlapDays: number;
}

/** One series to bring up to date. */
export interface SeriesTask {
  metric: string;
  slug: string;
  projectId: number;
  from: string;
  to: string;
}

/** The outcome of one series: what it wrote, or why nothing was. */
export type SeriesOutcome =
  | { ok: true; task: SeriesTask; fetched: number; written: WriteCount }
  | { ok: false; task: SeriesTask; error: string };

export interface MirrorPlan {
  tasks: SeriesTask[];
  /** What the upstream has that the local catalog does not, and series with no data upstream. */
  notices: string[];
  /**
   * Each `--metric` and `--project` name the upstream has nowhere among the metrics asked for (a
   * typo, most likely).
   */
  unmatched: string[];
}

/**
 * Compares the upstream catalog (`GET /v1/metrics`, with each project's stored coverage)
 * with the local one and the local store: one task per series both know, from the earlier
 * of the local and the upstream's last day minus the overlap (or the upstream's first day
 * for an empty series or one with days before the local first day, the local first day
 * for one the upstream emptied, or `since`) to
 * the later of the two last days, so trailing days the upstream removed are removed here
 * too, however many. Metrics and slugs only the upstream knows are
 * reported and left out.
 */
export async function planMirror(
  db: Queryable,
  catalog: Catalog,
  client: UpstreamClient,
  options: MirrorOptions,
  signal: AbortSignal,
): Promise<MirrorPlan> {
  const upstream = readUpstreamCatalog(await client.get('/v1/metrics', signal), client.baseUrl);
  await syncCatalog(db, catalog); // a store no server has prepared yet gets its project rows
  const notices: string[] = [];
  const wanted = (list: readonly string[] | undefined, item: string) => list === undefined || list.includes(item);
  const stored = await localSeries(db);
  const tasks: SeriesTask[] = [];
  for (const metric of upstream.metrics) {
    if (!wanted(options.metrics, metric.name)) continue;
    const local = catalog.byName.get(metric.name);
    if (local === undefined) {
      notices.push(`upstream metric ${metric.name} is not in the local catalog: skipped`);
      continue;
    }
    for (const project of metric.projects) {
      if (!wanted(options.projects, project.slug)) continue;
      if (!local.projects.includes(project.slug)) {
        notices.push(`upstream project ${metric.name}/${project.slug} is not in the local catalog: skipped`);
        continue;
      }
      const mine = stored.get(`${metric.name}/${project.slug}`)!;
      if (mine.last === null && (project.firstDate === null || project.lastDate === null)) continue;
      // Up to the later of the two last days: days stored here after the upstream's last
      // day are days the upstream removed, and the write removes what it was not sent.
      const to =
        project.lastDate === null || (mine.last !== null && mine.last > project.lastDate)
          ? mine.last!
          : project.lastDate;
      const from = options.since ?? resumeDay(mine, project, options.overlapDays);
      if (from > to) continue;
      tasks.push({ metric: metric.name, slug: project.slug, projectId: mine.id, from, to });
    }
  }
  return { tasks, notices, unmatched: unmatchedNames(upstream, options) };
}

/**
 * Brings one series up to date: fetches `[from, to]` from the upstream's REST API, checks
 * every point with the import's row checks, and writes the series in one transaction
 * through the import's write path (so unchanged values write nothing, revisions go to the
 * history, the changes feed and subscribers hear of it). A point stored here in the range
 * that the upstream no longer has is removed. One bad value writes nothing of the series.
 */
export async function mirrorSeries(
  store: Store,
  catalog: Catalog,
  client: UpstreamClient,
  task: SeriesTask,
  signal: AbortSignal,
): Promise<SeriesOutcome> {
  const query = `project=${encodeURIComponent(task.slug)}&start_date=${task.from}&end_date=${task.to}`;
  const body = await client.get(`/v1/metrics/${encodeURIComponent(task.metric)}?${query}`, signal);
  const points = parseSeries(body, task.slug);
  if (points === undefined)
    return { ok: false, task, error: `the upstream's answer is not the contract's {"${task.slug}":[{date, value}]}` };
  const rows: PointRow[] = [];
  for (const point of points) {
    const { date, value, ...extra } = point;
    const check = validateRow(catalog, {
      metric: task.metric,
      project: task.slug,
      date,
      value,
      extra: Object.keys(extra).length > 0 ? extra : undefined,
    });
    if (!check.ok)
      return {
        ok: false,
        task,
        error: `${task.metric}/${task.slug} ${typeof date === 'string' ? date.slice(0, 10) : '?'}: ${check.error}`,
      };
    if (check.row.value === null || check.row.day < task.from || check.row.day > task.to) {
      return {
        ok: false,
        task,
        error:
          `${task.metric}/${task.slug} ${check.row.day}: a point the upstream cannot ` +
          `have sent for ${task.from}..${task.to}`,
      };
    }
    rows.push({ projectId: task.projectId, day: check.row.day, value: check.row.value, extra: check.row.extra });
  }
  if (new Set(rows.map((r) => r.day)).size !== rows.length)
    return { ok: false, task, error: `${task.metric}/${task.slug}: the upstream sent a day twice` };
  const written = await store.transaction(async (tx) => {
    const upserted = await upsertPoints(tx, rows);
    const removed = await removePointsExcept(
      tx,
      task.projectId,
      task.from,
      task.to,
      rows.map((r) => r.day),
    );
    return { added: upserted.added, revised: upserted.revised, removed: removed.removed };
  });
  return { ok: true, task, fetched: rows.length, written };
}

// Private

/**
 * The first day a series is fetched from: the overlap before the earlier of the two last
 * days, so every day stored here after the upstream's last day is in the range and removed
 * in this run, not the overlap's worth per run. A series the upstream no longer
 * has is fetched from its first day here: all of it goes. Days the upstream has before the
 * first day stored here (history it back-filled, or a series this store began on its own)
 * are fetched from the upstream's first day: a range from the last day never reached them,
 * on any run. Never before the upstream's first day.
 */
function resumeDay(
  mine: LocalSeries,
  project: { firstDate: string | null; lastDate: string | null },
  overlapDays: number,
): string {
  if (mine.last === null) return project.firstDate!;
  if (project.lastDate === null) return mine.first!;
  if (project.firstDate !== null && project.firstDate < mine.first!) return project.firstDate;
  const last = mine.last < project.lastDate ? mine.last : project.lastDate;
  const resume = fromEpochDay(toEpochDay(last) - overlapDays);
  return project.firstDate !== null && resume < project.firstDate ? project.firstDate : resume;
}

function unmatchedNames(upstream: UpstreamCatalog, options: MirrorOptions): string[] {
  const metrics = upstream.metrics.filter((m) => options.metrics === undefined || options.metrics.includes(m.name));
  return [
    ...(options.metrics ?? [])
      .filter((name) => !metrics.some((m) => m.name === name))
      .map((name) => `upstream has no metric ${name}`),
    ...(options.projects ?? [])
      .filter((slug) => !metrics.some((m) => m.projects.some((p) => p.slug === slug)))
      .map(
        (slug) =>
          `upstream has no project ${slug}${options.metrics === undefined ? '' : ` in ${options.metrics.join(', ')}`}`,
      ),
  ];
}

/** The part of a `/v1/metrics` answer a sync reads; anything else in it is ignored. */
const UPSTREAM_CATALOG = z.object({
  metrics: z
    .array(
      z.object({
        name: z.string(),
        projects: z.array(
          z.object({
            slug: z.string(),
            firstDate: z.string().refine(isIsoDate).nullable(),
            lastDate: z.string().refine(isIsoDate).nullable(),
          }),
        ),
      }),
    )
    .min(1),
});

type UpstreamCatalog = z.infer<typeof UPSTREAM_CATALOG>;

/**
 * The upstream's catalog, or an UpstreamError naming what is wrong with it: a body that
 * is not JSON, not a catalog, or one listing no metric, so an upstream that does not
 * follow the contract ends the sync as a failure instead of "synced 0 of 0".
 */
function readUpstreamCatalog(body: string, baseUrl: string): UpstreamCatalog {
  const where = `${baseUrl}/v1/metrics`;
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new UpstreamError(
      `${where} did not answer JSON (it began ${JSON.stringify(body.slice(0, 40))}); ` +
        `is it the /v1 API of a metrics service?`,
    );
  }
  const parsed = UPSTREAM_CATALOG.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const at = issue.path.length === 0 ? 'the answer' : issue.path.join('.');
  const why = issue.code === 'too_small' ? 'lists no metric' : `is not a /v1 catalog (${at}: ${issue.message})`;
  throw new UpstreamError(`${where} ${why}; is it the /v1 API of a metrics service?`);
}

/** A series as stored here: its project row and its first and last stored days (null when empty). */
interface LocalSeries {
  id: number;
  first: string | null;
  last: string | null;
}

/** Each project's row id and first and last stored days. */
async function localSeries(db: Queryable): Promise<Map<string, LocalSeries>> {
  const rows = await readStoredSpans(db);
  return new Map(rows.map((r) => [projectKey(r.metric, r.slug), { id: r.projectId, first: r.first, last: r.last }]));
}

/**
 * The points of a contract answer `{"<slug>":[{"date","value",...extra}]}`, with each
 * `value` kept as the exact decimal text it was sent as (a JavaScript number would round
 * digits beyond the 17th). The contract writes only numbers after `"value":`, so quoting
 * them before parsing is safe; undefined when the answer has another shape.
 */
function parseSeries(body: string, slug: string): Record<string, unknown>[] | undefined {
  try {
    const parsed = JSON.parse(body.replace(/"value":(-?[0-9][0-9.eE+-]*)/g, '"value":"$1"')) as Record<string, unknown>;
    const points = parsed[slug];
    if (
      Object.keys(parsed).length !== 1 ||
      !Array.isArray(points) ||
      !points.every((p) => typeof p === 'object' && p !== null && !Array.isArray(p))
    )
      return undefined;
    return points as Record<string, unknown>[];
  } catch {
    return undefined;
  }
}
