import { readyDirectory } from '../api/unavailable.js';
import type { RestCall } from './rest-services.js';
import { sendJson } from '../http/send-json.js';
import { readParameters } from './parse-query.js';
import { createSeriesLoaders } from '../series/series-loader.js';
import { freshnessOf } from '../catalog/freshness.js';

/**
 * `GET /v1/metrics`: every metric with its value kind, whether `project` is required, its
 * default aggregation, unit, methodology, tags and update schedule, its allowed slugs, and each
 * slug's stored date coverage, last write and whether it is stale (behind its schedule).
 * It takes no parameters: any is refused, naming it, as on every other `/v1` path.
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
  await sendJson(req, res, JSON.stringify({ metrics }), { maxAgeSeconds: services.config.cacheMaxAgeSeconds });
}
