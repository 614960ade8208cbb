import DataLoader from 'dataloader';
import { readCoverage } from '../db/read-coverage.js';
import { readSeriesJson } from '../db/read-series.js';
import type { ProjectDirectory } from '../db/project-directory.js';
import type { Queryable } from '../db/store.js';
import { guardUnavailable } from './unavailable.js';

/** One series of one metric in an inclusive date range (null: unbounded). */
export interface SeriesKey {
  metric: string;
  slug: string;
  from: string | null;
  to: string | null;
}

export interface DataPoint {
  date: string;
  value: number;
  extra: Record<string, unknown> | null;
}

/** First and last day with data in the whole series, or null when it has none. */
export interface Coverage {
  first: string | null;
  last: string | null;
}

export interface SeriesLoaders {
  series: DataLoader<SeriesKey, DataPoint[], string>;
  coverage: DataLoader<Pick<SeriesKey, 'metric' | 'slug'>, Coverage, string>;
}

/**
 * Fresh loaders for one request: nothing cached outlives it. All series keys that share
 * (metric, from, to) become one SQL statement, however many projects or aliases ask for
 * them; all coverage keys of a request become one statement.
 */
export function createSeriesLoaders(db: Queryable, directory: ProjectDirectory, signal?: AbortSignal): SeriesLoaders {
  return {
    series: new DataLoader((keys) => loadSeriesBatch(db, directory, keys, signal), { cacheKeyFn: seriesCacheKey }),
    coverage: new DataLoader((keys) => loadCoverageBatch(db, directory, keys, signal), {
      cacheKeyFn: (k) => `${k.metric}\u0000${k.slug}`,
    }),
  };
}

// Private

function seriesCacheKey(key: SeriesKey): string {
  return `${rangeKey(key)}\u0000${key.slug}`;
}

/** Keys with the same range key are answered by one statement. */
function rangeKey(key: SeriesKey): string {
  return [key.metric, key.from ?? '', key.to ?? ''].join('\u0000');
}

async function loadSeriesBatch(db: Queryable, directory: ProjectDirectory, keys: readonly SeriesKey[], signal?: AbortSignal): Promise<DataPoint[][]> {
  const groups = new Map<string, { from: string | null; to: string | null; ids: Set<number> }>();
  for (const key of keys) {
    const id = directory.idOf(key.metric, key.slug);
    if (id === undefined) continue;
    const groupKey = rangeKey(key);
    const group = groups.get(groupKey) ?? { from: key.from, to: key.to, ids: new Set<number>() };
    group.ids.add(id);
    groups.set(groupKey, group);
  }
  const byGroupAndProject = new Map<string, DataPoint[]>();
  await Promise.all(
    [...groups].map(async ([groupKey, group]) => {
      const rows = await guardUnavailable(() => readSeriesJson(db, { projectIds: [...group.ids], from: group.from, to: group.to }, signal));
      for (const row of rows) byGroupAndProject.set(`${groupKey}\u0000${row.projectId}`, JSON.parse(row.points) as DataPoint[]);
    }),
  );
  return keys.map((key) => {
    const id = directory.idOf(key.metric, key.slug);
    return byGroupAndProject.get(`${rangeKey(key)}\u0000${id}`) ?? [];
  });
}

async function loadCoverageBatch(
  db: Queryable,
  directory: ProjectDirectory,
  keys: readonly Pick<SeriesKey, 'metric' | 'slug'>[],
  signal?: AbortSignal,
): Promise<Coverage[]> {
  const ids = keys.map((k) => directory.idOf(k.metric, k.slug));
  const known = [...new Set(ids.filter((id): id is number => id !== undefined))];
  const rows = known.length === 0 ? [] : await guardUnavailable(() => readCoverage(db, known, signal));
  const byId = new Map(rows.map((r) => [r.projectId, { first: r.first, last: r.last }]));
  return ids.map((id) => (id === undefined ? undefined : byId.get(id)) ?? { first: null, last: null });
}
