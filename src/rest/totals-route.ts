import { readTotal, totalJson } from '../analytics/read-total.js';
import { validateTotalRequest, type TotalRequest } from '../analytics/total-request.js';
import { ApiError } from '../api/api-error.js';
import { readyDirectory } from '../api/unavailable.js';
import { clipped } from '../clipped.js';
import { todayEpochDay } from '../dates.js';
import { sendJson } from '../http/send-json.js';
import { priceTotal } from '../limits/analytics-cost.js';
import { planSeries } from '../series/series-plan.js';
import { parseTotalQuery, TOTAL_PARAMS } from './analytics-params.js';
import { answerDryRun, isDryRun } from './dry-run-answer.js';
import type { RestCall, RestServices } from './rest-services.js';

/**
 * `GET /v1/totals/<name>`: parse → validate (the shared series schema, plus group, op and
 * require_complete) → charge the members' read → plan → one statement → JSON.
 */
export async function handleTotal(call: RestCall): Promise<void> {
  const { req, res, services, param, query, signal, meter } = call;
  const request = prepareTotal(services, param, query);
  const cost = totalCost(services, request);
  if (isDryRun(call)) return answerDryRun(call, cost);
  const charged = meter.charge(cost);
  if (charged !== undefined) await charged;
  const plan = planSeries(request.series, readyDirectory(services.state));
  const total = await readTotal(services.reads, plan, request.op, request.requireComplete, signal);
  await sendJson(req, res, totalJson(total), { maxAgeSeconds: services.config.cacheMaxAgeSeconds });
}

/** A total request from the metric name and raw query, validated; a 404 or 400 ApiError otherwise. */
export function prepareTotal(services: Pick<RestServices, 'catalog'>, name: string, query: string): TotalRequest {
  const metric = services.catalog.byName.get(name);
  if (metric === undefined)
    throw new ApiError('not-found', `unknown metric ${JSON.stringify(clipped(name))}; GET /v1/metrics lists them`);
  return validateTotalRequest(services.catalog, parseTotalQuery(metric, query), TOTAL_PARAMS);
}

/** What a total request costs against the rate limit, known before anything is read. */
export function totalCost(services: Pick<RestServices, 'storedSpans' | 'clock'>, request: TotalRequest): number {
  const { metric, slugs } = request.series;
  const stored = slugs.map((slug) => services.storedSpans.of(metric.name, slug));
  return priceTotal(request, todayEpochDay(services.clock()), stored).cost;
}
