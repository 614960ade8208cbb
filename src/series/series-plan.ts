import type { MetricDefinition } from '../catalog/load-catalog.js';
import type { ProjectDirectory } from '../db/project-directory.js';
import type { SeriesOptions } from './series-options.js';
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
  batchKey: string;
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
    batchKey: batchKey(request),
  };
}

/** Everything but the projects: requests with the same key can share one statement. */
function batchKey({ metric, from, to, options: o, asOf, vintage, lagDays }: SeriesRequest): string {
  return (
    `${metric.name}|${from ?? ''}|${to ?? ''}|${o.interval}` +
    `|${o.aggregation}|${o.fill}|${o.transform}|${o.window}` +
    `|${asOf ?? ''}${vintage === 'latest' ? '' : `|${vintage}|${lagDays ?? ''}`}`
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
