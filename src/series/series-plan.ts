import type { MetricDefinition } from '../catalog/load-catalog.js';
import type { ProjectDirectory } from '../db/project-directory.js';
import type { SeriesOptions } from './series-options.js';
import type { PointLayout } from './series-sql.js';
import type { SeriesRequest } from './series-request.js';
import type { Vintage } from './vintage.js';

/** A project of a plan: its slug as the caller named it and its row id. */
export interface PlannedProject {
  slug: string;
  id: number;
}

/**
 * What the store is asked for: a validated request with its projects resolved to row ids.
 * Plans with the same `batchKey` differ only in their projects, so one statement can
 * answer all of them (the GraphQL loader batches on it; REST sends one plan per request).
 */
export interface SeriesPlan {
  metric: MetricDefinition;
  projects: readonly PlannedProject[];
  from: string | null;
  to: string | null;
  options: SeriesOptions;
  /** See {@link SeriesRequest.asOf}. */
  asOf: string | null;
  /** See {@link SeriesRequest.vintage}. */
  vintage: Vintage;
  lagDays: number | null;
  /** See {@link SeriesRequest.limitPerProject}. */
  limitPerProject?: number | null;
  batchKey: string;
  /**
   * Where the points come from when they are not one metric's stored points (a formula's
   * plan, src/formula/): the statement for some of its projects. Undefined: the series statement.
   */
  source?: PlanSource;
}

/** The statement of a plan whose points are computed by other SQL than the series statement. */
export interface PlanSource {
  /** The statement answering `projects` in `layout`, with the rows the series statement has, and its parameters. */
  statement(layout: PointLayout, projects: readonly PlannedProject[]): { text: string; parameters: unknown[] };
}

/** Resolves a request's slugs to project ids. */
export function planSeries(request: SeriesRequest, directory: ProjectDirectory): SeriesPlan {
  return {
    metric: request.metric,
    // A slug of the catalog always has a project row after the start-up sync; -1 would just read no points.
    projects: request.slugs.map((slug) => ({ slug, id: directory.idOf(request.metric.name, slug) ?? -1 })),
    from: request.from,
    to: request.to,
    options: request.options,
    asOf: request.asOf,
    vintage: request.vintage,
    lagDays: request.lagDays,
    ...(request.limitPerProject == null ? {} : { limitPerProject: request.limitPerProject }),
    batchKey: batchKey(request),
  };
}

/** Everything but the projects: requests with the same key can share one statement. */
function batchKey({ metric, from, to, options: o, asOf, vintage, lagDays, limitPerProject }: SeriesRequest): string {
  return (
    `${metric.name}|${from ?? ''}|${to ?? ''}|${o.interval}` +
    `|${o.aggregation}|${o.fill}|${o.transform}|${o.window}` +
    `|${asOf ?? ''}${vintage === 'latest' ? '' : `|${vintage}|${lagDays ?? ''}`}` +
    `${limitPerProject == null ? '' : `|limit ${limitPerProject}`}`
  );
}

/** The stored daily points of a metric's projects over their whole history: no options. */
export function wholeSeries(metric: MetricDefinition, slugs: readonly string[]): SeriesRequest {
  return {
    metric,
    slugs,
    from: null,
    to: null,
    options: { interval: 'day', aggregation: metric.defaultAggregation, fill: 'none', transform: null, window: null },
    asOf: null,
    vintage: 'latest',
    lagDays: null,
  };
}
