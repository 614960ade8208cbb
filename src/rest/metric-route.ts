import { ApiError } from '../api/api-error.js';
import { lookUpAnswer } from '../cache/answer-keeper.js';
import { readyDirectory } from '../api/unavailable.js';
import { todayEpochDay } from '../dates.js';
import type { RestCall } from './rest-services.js';
import { readSeriesRows } from '../series/read-series.js';
import { createRequestPreparer } from './prepared-requests.js';
import { sendKeptAnswer, sendSeriesBody } from './send-series.js';
import { answerDryRun, isDryRun } from './dry-run-answer.js';
import { clipped } from '../clipped.js';
import { priceVintageHistory } from '../limits/history-cost.js';

/**
 * Points fetched per round trip (about 40 bytes each as JSON, so about 1.2 MB of bytes
 * that never become strings). An answer that fits is read in one statement; a larger one
 * streams a few projects at a time so memory stays bounded. A cursor costs about 15% per
 * statement, so small answers do not use one. Measured on 76 projects x 3,650 days at
 * one and eight connections: 20,000 points per batch took 185 ms (RSS growth 2 / 26 MB),
 * 30,000 took 177 ms (3 / 28 MB), 60,000 took 166 ms (2 / 47 MB).
 */
export const POINTS_PER_BATCH = 30_000;

/**
 * `GET /v1/metrics/<name>`: parse → validate (shared with GraphQL) → charge the request's
 * cost to the key → plan → one SQL statement that builds each project's points as JSON
 * text → write them in request order. Each handler keeps its own prepared requests
 * (prepared-requests.ts), so apps built on other catalogs share none.
 */
export function createMetricHandler(): (call: RestCall) => Promise<void> {
  const prepare = createRequestPreparer();
  return async (call) => {
    const { req, res, services, param, query, signal, meter } = call;
    const metric = services.catalog.served.get(param);
    if (metric === undefined)
      throw new ApiError('not-found', `unknown metric ${JSON.stringify(clipped(param))}; GET /v1/metrics lists them`);
    const prepared = prepare(metric, query, todayEpochDay(services.clock()));
    const { cost, span } = prepared.price(services.storedSpans);
    // A vintage reads the history too, and pays for its rows (counted first: an indexed count; none for `latest`).
    const history =
      prepared.request.vintage === 'latest'
        ? 0
        : await priceVintageHistory(services.reads, prepared.request, readyDirectory(services.state), signal);
    if (isDryRun(call)) return answerDryRun(call, cost + history);
    const charged = meter.charge(cost + history);
    if (charged !== undefined) await charged;
    const plan = prepared.plan(readyDirectory(services.state));
    // Charged first, for a kept answer too: it costs what reading it did (kept at cost 0).
    const keeper = await lookUpAnswer(services.responseCache, prepared.key, meter);
    if (keeper.kept !== undefined) return sendKeptAnswer(req, res, keeper.kept, services.config.cacheMaxAgeSeconds);
    const projectsPerBatch = Math.max(1, Math.floor(POINTS_PER_BATCH / Math.max(1, span.buckets)));
    const answer = await readSeriesRows(services.reads, plan, 'rest', projectsPerBatch, signal);
    const { cacheMaxAgeSeconds, stalledClientSeconds } = services.config;
    await sendSeriesBody(req, res, plan, answer, cacheMaxAgeSeconds, keeper, stalledClientSeconds * 1000);
  };
}
