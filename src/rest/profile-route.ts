import { ApiError } from '../api/api-error.js';
import { guardUnavailable, readyDirectory } from '../api/unavailable.js';
import { clipped } from '../clipped.js';
import { sendJson } from '../http/send-json.js';
import { priceProfile } from '../limits/history-cost.js';
import { validateLookbackDays } from '../revisions/profile-request.js';
import { answerDryRun, isDryRun } from './dry-run-answer.js';
import { COST_PARAMS, readParameters } from './parse-query.js';
import type { RestCall } from './rest-services.js';

/**
 * `GET /v1/metrics/<name>/profile?lookback_days=180`: how the metric's values were revised
 * over its last days of data (revision-profiles.ts), as `{"metric","lookbackDays","revisionProfile"}`.
 * Kept between writes to the metric, so most reads compute nothing; priced first (`dry_run=true`
 * answers that price only).
 */
export async function handleProfile(call: RestCall): Promise<void> {
  const { req, res, services, param, query, meter } = call;
  const metric = services.catalog.byName.get(param);
  if (metric === undefined)
    throw new ApiError('not-found', `unknown metric ${JSON.stringify(clipped(param))}; GET /v1/metrics lists them`);
  const params = readParameters(query, ['lookback_days', ...COST_PARAMS]);
  const lookbackDays = validateLookbackDays(params.get('lookback_days'), 'lookback_days');
  const directory = readyDirectory(services.state);
  const profiles = services.revisionProfiles;
  const cost = priceProfile(metric.projects.length, lookbackDays, profiles.isKept(metric.name, lookbackDays));
  if (isDryRun(call)) return answerDryRun(call, cost);
  await meter.charge(cost);
  const ids = metric.projects.flatMap((slug) => directory.idOf(metric.name, slug) ?? []);
  const profile = await guardUnavailable(() => profiles.get(services.reads, metric.name, ids, lookbackDays));
  await sendJson(req, res, JSON.stringify({ metric: metric.name, lookbackDays, revisionProfile: profile }));
}
