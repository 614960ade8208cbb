import { readyDirectory } from '../api/unavailable.js';
import type { RestCall } from './rest-services.js';
import { sendJson } from '../http/send-json.js';
import { readParameters } from './parse-query.js';
import { createSeriesLoaders, type Coverage } from '../series/series-loader.js';
import { freshnessOf } from '../catalog/freshness.js';

/**
 * `GET /v1/metrics`: every stored metric with its value kind, whether `project` is required, its
 * default aggregation, unit, methodology, tags and update schedule, its allowed slugs, and each
 * slug's stored date coverage, last write and whether it is stale (behind its schedule).
 * It takes no parameters: any is refused, naming it, as on every other `/v1` path. The
 * derived metrics follow, each with its `formula` and `inputs`, and as coverage the days
 * all its inputs span (the latest first day, the earliest last day).
 */
export async function handleCatalog({ req, res, services, query, signal }: RestCall): Promise<void> {
  readParameters(query, []);
  const loaders = createSeriesLoaders(services.reads, readyDirectory(services.state), signal);
  const now = services.clock();
  const metrics = await Promise.all(
    services.catalog.metrics.map(async (metric) => {
      const coverage = await Promise.all(
        metric.projects.map((slug) => loaders.coverage.load({ metric: metric.name, slug })),
      );
      return {
        name: metric.name,
        path: `/v1/metrics/${metric.name}`,
        valueKind: metric.valueKind,
        projectRequired: metric.projectRequired,
        defaultAggregation: metric.defaultAggregation,
        unit: metric.unit,
        methodology: metric.methodology,
        tags: metric.tags,
        expectedBy: metric.expectedBy,
        stabilizationDays: metric.stabilizationDays,
        projects: metric.projects.map((slug, i) => ({
          slug,
          firstDate: coverage[i]?.first ?? null,
          lastDate: coverage[i]?.last ?? null,
          updatedAt: coverage[i]?.updatedAt ?? null,
          stale: freshnessOf(metric, { last: coverage[i]?.last ?? null, updatedAt: null }, now).stale,
        })),
      };
    }),
  );
  const derived = await Promise.all(
    services.catalog.derived.map(async (metric) => {
      const inputs = metric.formula?.inputs ?? [];
      return {
        name: metric.name,
        path: `/v1/metrics/${metric.name}`,
        valueKind: metric.valueKind,
        projectRequired: metric.projectRequired,
        defaultAggregation: metric.defaultAggregation,
        unit: metric.unit,
        methodology: metric.methodology,
        tags: metric.tags,
        expectedBy: metric.expectedBy,
        stabilizationDays: metric.stabilizationDays,
        formula: metric.formula?.expr ?? null,
        inputs: inputs.map((i) => ({ name: i.name, metric: i.metric.name, aggregation: i.aggregation ?? null })),
        projects: await Promise.all(
          metric.projects.map(async (slug) => {
            const all = await Promise.all(inputs.map((i) => loaders.coverage.load({ metric: i.metric.name, slug })));
            const coverage = commonCoverage(all);
            const stale = freshnessOf(metric, { last: coverage.lastDate, updatedAt: null }, now).stale;
            return { slug, ...coverage, stale };
          }),
        ),
      };
    }),
  );
  await sendJson(req, res, JSON.stringify({ metrics: [...metrics, ...derived] }), {
    maxAgeSeconds: services.config.cacheMaxAgeSeconds,
  });
}

// Private

/** The days every input spans (null when one has none), and the newest write to any. */
function commonCoverage(all: readonly Coverage[]) {
  const firsts = all.map((c) => c.first);
  const lasts = all.map((c) => c.last);
  const complete = firsts.every((d) => d !== null) && lasts.every((d) => d !== null);
  const firstDate = complete ? (firsts as string[]).reduce((a, b) => (a > b ? a : b)) : null;
  const lastDate = complete ? (lasts as string[]).reduce((a, b) => (a < b ? a : b)) : null;
  const written = all.map((c) => c.updatedAt).filter((t): t is string => t !== null);
  return {
    firstDate: firstDate !== null && lastDate !== null && firstDate <= lastDate ? firstDate : null,
    lastDate: firstDate !== null && lastDate !== null && firstDate <= lastDate ? lastDate : null,
    updatedAt: written.length === 0 ? null : written.reduce((a, b) => (a > b ? a : b)),
  };
}
