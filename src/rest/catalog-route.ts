import type { IncomingMessage, ServerResponse } from 'node:http';
import { createSeriesLoaders } from '../api/series-loader.js';
import { sendJson } from '../http/send-json.js';
import type { ProjectDirectory } from '../db/project-directory.js';
import type { Services } from '../services.js';

/**
 * `GET /v1/metrics`: every metric with its value kind, whether `project` is required,
 * its allowed slugs, and the stored date coverage of each slug.
 */
export async function handleCatalog(
  services: Services,
  directory: ProjectDirectory,
  req: IncomingMessage,
  res: ServerResponse,
  signal: AbortSignal,
): Promise<void> {
  const loaders = createSeriesLoaders(services.store, directory, signal);
  const metrics = await Promise.all(
    services.catalog.metrics.map(async (metric) => {
      const coverage = await Promise.all(metric.projects.map((slug) => loaders.coverage.load({ metric: metric.name, slug })));
      return {
        name: metric.name,
        path: `/v1/metrics/${metric.name}`,
        valueKind: metric.valueKind,
        projectRequired: metric.projectRequired,
        projects: metric.projects.map((slug, i) => ({ slug, firstDate: coverage[i]?.first ?? null, lastDate: coverage[i]?.last ?? null })),
      };
    }),
  );
  await sendJson(req, res, JSON.stringify({ metrics }), { maxAgeSeconds: services.config.cacheMaxAgeSeconds });
}
