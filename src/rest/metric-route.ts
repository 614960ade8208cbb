import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../api/api-error.js';
import { validateSeriesRequest } from '../api/run-series-request.js';
import { createSeriesLoaders } from '../api/series-loader.js';
import { sendJson } from '../http/send-json.js';
import type { Services } from '../services.js';
import { parseMetricQuery, REST_PARAMS } from './parse-query.js';
import { serializeSeries } from './serialize-series.js';

/**
 * `GET /v1/metrics/<name>`: parse → validate (shared with GraphQL) → load (the same
 * loaders GraphQL uses) → serialize in request order.
 */
export async function handleMetric(services: Services, req: IncomingMessage, res: ServerResponse, name: string, rawQuery: string): Promise<void> {
  if (!services.catalog.byName.has(name)) {
    throw new ApiError('not-found', `unknown metric ${JSON.stringify(name.slice(0, 64))}; GET /v1/metrics lists them`);
  }
  const request = validateSeriesRequest(services, parseMetricQuery(name, rawQuery), REST_PARAMS);
  const loaders = createSeriesLoaders(services.store, services.directory);
  const series = await Promise.all(
    request.slugs.map((slug) => loaders.series.load({ metric: request.metric.name, slug, from: request.from, to: request.to })),
  );
  await sendJson(req, res, serializeSeries(request.slugs, series), {
    maxAgeSeconds: services.config.cacheMaxAgeSeconds,
  });
}
