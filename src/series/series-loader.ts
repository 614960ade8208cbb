import DataLoader from 'dataloader';
import { guardUnavailable } from '../api/unavailable.js';
import { readCoverage } from '../db/read-coverage.js';
import type { ProjectDirectory } from '../db/project-directory.js';
import type { CancelSignal, ColumnText, Queryable, Store } from '../db/store.js';
import type { PointField } from './series-sql.js';
import { readSeries } from './read-series.js';
import type { PlannedProject, SeriesPlan } from './series-plan.js';

/** One project's series under one plan. */
export interface SeriesKey {
  plan: SeriesPlan;
  project: PlannedProject;
}

/** One project's points with the DataPoint fields a query selected, in its order. */
export interface PointsKey extends SeriesKey {
  fields: readonly PointField[];
}

/** A point as GraphQL serves it. */
export interface DataPoint {
  date: string;
  /** Null for a bucket filled with null, or a transform at a gap. */
  value: number | null;
  /** The daily values behind the point: 1 for a stored day, up to the bucket's days, 0 for a filled bucket. */
  count: number;
  extra: Record<string, unknown> | null;
  /** When the value served was written (ISO 8601 UTC); null for a filled bucket. */
  revisedAt: string | null;
  /** PROVISIONAL, REVISED or FINAL (see series-sql.ts); null for a filled bucket. */
  status: string | null;
}

/** First and last day with data in the whole series (null when it has none), and when it was last written. */
export interface Coverage {
  first: string | null;
  last: string | null;
  updatedAt: string | null;
}

export interface SeriesLoaders {
  /** A project's points: the JSON text of an array of DataPoint objects, as the database's bytes. */
  points: DataLoader<PointsKey, ColumnText, string>;
  coverage: DataLoader<CoverageKey, Coverage, string>;
}

/** A series whose coverage is asked for; with `asOf`, as it was at that instant (as the plan's points are read). */
export interface CoverageKey {
  metric: string;
  slug: string;
  asOf?: string | null;
}

/**
 * Fresh loaders for one request: nothing cached outlives it. All points keys whose plans
 * share a batch key (metric, range, options) and fields become one SQL statement, however
 * many projects or aliases ask for them; all coverage keys of a request become one statement.
 */
export function createSeriesLoaders(
  db: Queryable & Pick<Store, 'queryRaw'>,
  directory: ProjectDirectory,
  signal?: CancelSignal,
): SeriesLoaders {
  return {
    points: new DataLoader((keys) => loadPointsBatch(db, keys, signal), {
      cacheKeyFn: (k) => `${statementKey(k)}\u0000${k.project.id}`,
    }),
    coverage: new DataLoader((keys) => loadCoverageBatch(db, directory, keys, signal), {
      cacheKeyFn: (k) => `${k.metric}\u0000${k.slug}\u0000${k.asOf ?? ''}`,
    }),
  };
}

// Private

/** Keys that one statement answers: the same plan batch and the same fields. */
function statementKey(k: PointsKey): string {
  return `${k.plan.batchKey}\u0000${k.fields.join(',')}`;
}

async function loadPointsBatch(
  db: Pick<Store, 'queryRaw'>,
  keys: readonly PointsKey[],
  signal?: CancelSignal,
): Promise<ColumnText[]> {
  const batches = new Map<string, { key: PointsKey; projects: Map<number, PlannedProject> }>();
  for (const key of keys) {
    const batch = batches.get(statementKey(key)) ?? { key, projects: new Map() };
    batch.projects.set(key.project.id, key.project);
    batches.set(statementKey(key), batch);
  }
  const points = new Map<string, ColumnText>();
  await Promise.all(
    [...batches].map(async ([statement, { key, projects }]) => {
      for (const row of await readSeries(db, key.plan, [...projects.values()], { graphql: key.fields }, signal)) {
        points.set(`${statement}\u0000${row.projectId}`, row.points);
      }
    }),
  );
  return keys.map((k) => points.get(`${statementKey(k)}\u0000${k.project.id}`) ?? '[]');
}

async function loadCoverageBatch(
  db: Queryable,
  directory: ProjectDirectory,
  keys: readonly CoverageKey[],
  signal?: CancelSignal,
): Promise<Coverage[]> {
  const ids = keys.map((k) => directory.idOf(k.metric, k.slug));
  const instants = keys.map((k) => k.asOf ?? null);
  // One statement per instant asked for (nearly always one: now, or a request's asOf).
  const byInstant = new Map<string | null, Map<number, Coverage>>();
  await Promise.all(
    [...new Set(instants)].map(async (asOf) => {
      const known = [...new Set(ids.filter((id, i): id is number => id !== undefined && instants[i] === asOf))];
      const rows = known.length === 0 ? [] : await guardUnavailable(() => readCoverage(db, known, signal, asOf));
      byInstant.set(
        asOf,
        new Map(rows.map((r) => [r.projectId, { first: r.first, last: r.last, updatedAt: r.updatedAt }])),
      );
    }),
  );
  return ids.map(
    (id, i) =>
      (id === undefined ? undefined : byInstant.get(instants[i] ?? null)?.get(id)) ?? {
        first: null,
        last: null,
        updatedAt: null,
      },
  );
}
