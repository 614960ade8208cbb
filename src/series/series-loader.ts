import DataLoader from 'dataloader';
import { guardUnavailable } from '../api/unavailable.js';
import { readCoverage } from '../db/read-coverage.js';
import type { ProjectDirectory } from '../db/project-directory.js';
import type { Queryable } from '../db/store.js';
import { readSeries } from './read-series.js';
import type { PlannedProject, SeriesPlan } from './series-plan.js';

/** One project's series under one plan. */
export interface SeriesKey {
  plan: SeriesPlan;
  project: PlannedProject;
}

/** A point as GraphQL serves it. */
export interface DataPoint {
  date: string;
  /** Null for a bucket filled with null, or a transform at a gap. */
  value: number | null;
  /** The daily values behind the point: 1 for a stored day, up to the bucket's days, 0 for a filled bucket. */
  count: number;
  extra: Record<string, unknown> | null;
}

/** First and last day with data in the whole series (null when it has none), and when it was last written. */
export interface Coverage {
  first: string | null;
  last: string | null;
  updatedAt: string | null;
}

export interface SeriesLoaders {
  series: DataLoader<SeriesKey, DataPoint[], string>;
  coverage: DataLoader<{ metric: string; slug: string }, Coverage, string>;
}

/**
 * Fresh loaders for one request: nothing cached outlives it. All series keys whose plans
 * share a batch key (metric, range) become one SQL statement, however many projects or
 * aliases ask for them; all coverage keys of a request become one statement.
 */
export function createSeriesLoaders(db: Queryable, directory: ProjectDirectory, signal?: AbortSignal): SeriesLoaders {
  return {
    series: new DataLoader((keys) => loadSeriesBatch(db, keys, signal), { cacheKeyFn: (k) => `${k.plan.batchKey}\u0000${k.project.id}` }),
    coverage: new DataLoader((keys) => loadCoverageBatch(db, directory, keys, signal), { cacheKeyFn: (k) => `${k.metric}\u0000${k.slug}` }),
  };
}

// Private

async function loadSeriesBatch(db: Queryable, keys: readonly SeriesKey[], signal?: AbortSignal): Promise<DataPoint[][]> {
  const batches = new Map<string, { plan: SeriesPlan; projects: Map<number, PlannedProject> }>();
  for (const { plan, project } of keys) {
    const batch = batches.get(plan.batchKey) ?? { plan, projects: new Map() };
    batch.projects.set(project.id, project);
    batches.set(plan.batchKey, batch);
  }
  const points = new Map<string, DataPoint[]>();
  await Promise.all([...batches.values()].map(async ({ plan, projects }) => {
    for (const row of await readSeries(db, plan, [...projects.values()], 'graphql', signal)) {
      points.set(`${plan.batchKey}\u0000${row.projectId}`, JSON.parse(row.points) as DataPoint[]);
    }
  }));
  return keys.map((k) => points.get(`${k.plan.batchKey}\u0000${k.project.id}`) ?? []);
}

async function loadCoverageBatch(
  db: Queryable,
  directory: ProjectDirectory,
  keys: readonly { metric: string; slug: string }[],
  signal?: AbortSignal,
): Promise<Coverage[]> {
  const ids = keys.map((k) => directory.idOf(k.metric, k.slug));
  const known = [...new Set(ids.filter((id): id is number => id !== undefined))];
  const rows = known.length === 0 ? [] : await guardUnavailable(() => readCoverage(db, known, signal));
  const byId = new Map(rows.map((r) => [r.projectId, { first: r.first, last: r.last, updatedAt: r.updatedAt }]));
  return ids.map((id) => (id === undefined ? undefined : byId.get(id)) ?? { first: null, last: null, updatedAt: null });
}
