import { rankingJson, readRanking } from '../analytics/read-rank.js';
import { validateRankRequest, type RankRequest } from '../analytics/rank-request.js';
import { ApiError } from '../api/api-error.js';
import { readyDirectory } from '../api/unavailable.js';
import { clipped } from '../clipped.js';
import { todayEpochDay } from '../dates.js';
import { sendJson } from '../http/send-json.js';
import { priceRanking } from '../limits/analytics-cost.js';
import { planSeries } from '../series/series-plan.js';
import { parseRankQuery, RANK_PARAMS } from './analytics-params.js';
import { answerDryRun, isDryRun } from './dry-run-answer.js';
import type { RestCall, RestServices } from './rest-services.js';

/**
 * `GET /v1/rank/<name>`: parse → validate (the shared series schema, plus group, by, order
 * and top) → charge the windows' read → plan → one statement → JSON.
 */
export async function handleRank(call: RestCall): Promise<void> {
  const { req, res, services, param, query, signal, meter } = call;
  const request = prepareRank(services, param, query);
  const cost = rankCost(services, request);
  if (isDryRun(call)) return answerDryRun(call, cost);
  const charged = meter.charge(cost);
  if (charged !== undefined) await charged;
  const plan = planSeries(request.series, readyDirectory(services.state));
  const ranking = await readRanking(services.reads, plan, request, signal);
  await sendJson(req, res, rankingJson(ranking), { maxAgeSeconds: services.config.cacheMaxAgeSeconds });
}

/** A ranking request from the metric name and raw query, validated; a 404 or 400 ApiError otherwise. */
export function prepareRank(services: Pick<RestServices, 'catalog'>, name: string, query: string): RankRequest {
  const metric = services.catalog.byName.get(name);
  if (metric === undefined)
    throw new ApiError('not-found', `unknown metric ${JSON.stringify(clipped(name))}; GET /v1/metrics lists them`);
  return validateRankRequest(services.catalog, parseRankQuery(metric, query), RANK_PARAMS);
}

/** What a ranking request costs against the rate limit, known before anything is read. */
export function rankCost(services: Pick<RestServices, 'storedSpans' | 'clock'>, request: RankRequest): number {
  const { metric, slugs } = request.series;
  const stored = slugs.map((slug) => services.storedSpans.of(metric.name, slug));
  return priceRanking(request, todayEpochDay(services.clock()), stored).cost;
}
