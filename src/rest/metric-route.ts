import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../api/api-error.js';
import { validateSeriesRequest } from '../api/run-series-request.js';
import { guardStream } from '../api/unavailable.js';
import { streamRestSeries } from '../db/read-series.js';
import type { Services } from '../services.js';
import { parseMetricQuery, REST_PARAMS } from './parse-query.js';
import { sendSeriesBody } from './send-series.js';

/** Projects fetched per round trip when a body streams: bounds memory for the largest answers. */
const STREAM_BATCH_PROJECTS = 4;

/**
 * `GET /v1/metrics/<name>`: parse → validate (shared with GraphQL) → one SQL statement
 * that builds each project's points as JSON text → write them in request order.
 */
export async function handleMetric(services: Services, req: IncomingMessage, res: ServerResponse, name: string, rawQuery: string): Promise<void> {
  if (!services.catalog.byName.has(name)) {
    throw new ApiError('not-found', `unknown metric ${JSON.stringify(name.slice(0, 64))}; GET /v1/metrics lists them`);
  }
  const request = validateSeriesRequest(services, parseMetricQuery(name, rawQuery), REST_PARAMS);
  // A slug of the catalog always has a project row after the start-up sync; -1 would just read no points.
  const projects = request.slugs.map((slug) => ({ slug, id: services.directory.idOf(request.metric.name, slug) ?? -1 }));
  const rows = streamRestSeries(services.store, { projects, from: request.from, to: request.to }, STREAM_BATCH_PROJECTS);
  await sendSeriesBody(req, res, request, guardStream(rows), services.config.cacheMaxAgeSeconds);
}
