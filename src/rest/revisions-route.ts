import { ApiError } from '../api/api-error.js';
import { guardUnavailable, readyDirectory } from '../api/unavailable.js';
import { clipped } from '../clipped.js';
import { sendJson } from '../http/send-json.js';
import { priceTriangleRead } from '../limits/history-cost.js';
import { readTriangle, type TriangleRow } from '../revisions/read-triangle.js';
import { triangleDays, validateTriangleRequest, type TriangleRequest } from '../revisions/triangle-request.js';
import { answerDryRun, isDryRun } from './dry-run-answer.js';
import { COST_PARAMS, readParameters } from './parse-query.js';
import type { RestCall } from './rest-services.js';

/**
 * `GET /v1/revisions/<metric>?project=<slug>&start_date&end_date&lags=0,1,7,30`: one
 * project's revision triangle, one row per day ever written: the value known at the end of
 * D + each lag, the latest, how often and how much the day was revised. Priced by its cells
 * and the history rows it reads, counted before it reads them (history-cost.ts); `dry_run=true`
 * answers that price only.
 */
export async function handleRevisions(call: RestCall): Promise<void> {
  const { req, res, services, param, query, signal, meter } = call;
  const metric = services.catalog.byName.get(param);
  if (metric === undefined)
    throw new ApiError('not-found', `unknown metric ${JSON.stringify(clipped(param))}; GET /v1/metrics lists them`);
  const params = readParameters(query, ['project', 'start_date', 'end_date', 'lags', ...COST_PARAMS]);
  const request = validateTriangleRequest(
    {
      metric,
      project: params.get('project'),
      from: params.get('start_date'),
      to: params.get('end_date'),
      lags: params.get('lags'),
    },
    { project: 'project', from: 'start_date', to: 'end_date', lags: 'lags' },
  );
  const projectId = readyDirectory(services.state).idOf(metric.name, request.slug) ?? -1;
  // The price counts the range's history rows (one indexed count), so a dry run reads no row of data.
  const cost = await priceTriangleRead(services.reads, request, triangleDays(request), projectId, signal);
  if (isDryRun(call)) return answerDryRun(call, cost);
  await meter.charge(cost);
  const rows = await guardUnavailable(() =>
    readTriangle(services.reads, projectId, request.from, request.to, request.lags, signal),
  );
  await sendJson(req, res, triangleJson(request, rows));
}

// Private

/** The answer's JSON; values keep PostgreSQL's numeric text, so nothing is rounded. */
function triangleJson(request: TriangleRequest, rows: readonly TriangleRow[]): string {
  const number = (text: string | null) => text ?? 'null';
  const lines = rows.map(
    (r) =>
      `{"date":"${r.date}","firstWrittenAt":"${r.firstWrittenAt}",` +
      `"values":[${r.values.map(number).join(',')}],"latest":${number(r.latest)},` +
      `"revisionCount":${r.revisionCount},"maxAbsRevisionPercent":${JSON.stringify(r.maxAbsRevisionPercent)}}`,
  );
  return (
    `{"metric":${JSON.stringify(request.metric.name)},"project":${JSON.stringify(request.slug)},` +
    `"lags":${JSON.stringify(request.lags)},"rows":[${lines.join(',')}]}`
  );
}
