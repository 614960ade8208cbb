import { ApiError } from '../api/api-error.js';
import { readyDirectory } from '../api/unavailable.js';
import { lookUpAnswer } from '../cache/answer-keeper.js';
import { clipped } from '../clipped.js';
import { todayEpochDay } from '../dates.js';
import { planFormula } from '../formula/formula-plan.js';
import {
  validateFormulaRequest,
  type FormulaRequestField,
  type FormulaRequestInput,
} from '../formula/formula-request.js';
import { priceSeriesRequest } from '../limits/formula-cost.js';
import type { PricedRequest } from '../limits/request-cost.js';
import { readSeriesRows } from '../series/read-series.js';
import type { SeriesRequest } from '../series/series-request.js';
import { POINTS_PER_BATCH } from './metric-route.js';
import { COST_PARAMS, EXTENSION_PARAMS, readParameters, REST_PARAMS } from './parse-query.js';
import { answerDryRun, isDryRun } from './dry-run-answer.js';
import type { RestCall, RestServices } from './rest-services.js';
import { sendKeptAnswer, sendSeriesBody } from './send-series.js';

/** The REST parameter behind each field of a formula request. */
export const FORMULA_PARAMS: Readonly<Record<FormulaRequestField, string>> = {
  ...REST_PARAMS,
  expr: 'expr',
  inputs: 'input',
  group: 'group',
};

/**
 * `GET /v1/formula?expr=…&input=p:priority-fees-usd&input=b:transaction-base-fee-total-usd[:sum]&project=…`
 * plus the series options: the expression per bucket of each project, answered in the
 * contract's shape `{"slug":[{date, value}]}`. Parse → validate (shared with GraphQL's
 * `formula`) → price (the sum of its inputs) → charge → plan → one statement → the series writer.
 */
export async function handleFormula(call: RestCall): Promise<void> {
  const { req, res, services, query, signal, meter } = call;
  const request = validateFormulaRequest(services.catalog, parseFormulaQuery(query), FORMULA_PARAMS);
  const { cost, span } = priceFormula(services, request);
  if (isDryRun(call)) return answerDryRun(call, cost);
  await meter.charge(cost);
  const plan = planFormula(request, readyDirectory(services.state));
  const keeper = await lookUpAnswer(services.responseCache, `formula?${query}`, meter);
  if (keeper.kept !== undefined) return sendKeptAnswer(req, res, keeper.kept, services.config.cacheMaxAgeSeconds);
  const projectsPerBatch = Math.max(1, Math.floor(POINTS_PER_BATCH / Math.max(1, span.buckets)));
  const answer = await readSeriesRows(services.reads, plan, 'rest', projectsPerBatch, signal);
  const { cacheMaxAgeSeconds, stalledClientSeconds } = services.config;
  await sendSeriesBody(req, res, plan, answer, cacheMaxAgeSeconds, keeper, stalledClientSeconds * 1000);
}

/** What a formula request costs, before anything is read: the sum of its inputs' prices. */
export function priceFormula(
  services: Pick<RestServices, 'storedSpans' | 'clock'>,
  request: SeriesRequest,
): PricedRequest {
  return priceSeriesRequest(request, todayEpochDay(services.clock()), (metric, slug) =>
    services.storedSpans.of(metric, slug),
  );
}

/**
 * Reads a formula query: `input` may repeat (one per input, `name:metric` or
 * `name:metric:aggregation`); every other parameter is given at most once, as on `/v1/metrics/<name>`.
 */
export function parseFormulaQuery(rawQuery: string): FormulaRequestInput {
  const others = new URLSearchParams();
  const inputs: FormulaRequestInput['inputs'][number][] = [];
  for (const [name, value] of new URLSearchParams(rawQuery)) {
    if (name !== 'input') others.append(name, value);
    else if (inputs.length <= MAX_READ_INPUTS) inputs.push(parseInput(value));
  }
  const known = [
    'expr',
    'input',
    'project',
    'group',
    'start_date',
    'end_date',
    // Each input names its own aggregation; a formula reads no vintage.
    ...EXTENSION_PARAMS.filter((p) => p !== 'aggregation' && p !== 'vintage' && p !== 'lag_days'),
    ...COST_PARAMS,
  ];
  const seen = readParameters(others.toString(), known);
  const project = seen.get('project');
  return {
    expr: seen.get('expr'),
    inputs,
    projects: project === undefined ? undefined : project.split(','),
    group: seen.get('group'),
    from: seen.get('start_date'),
    to: seen.get('end_date'),
    interval: seen.get('interval'),
    fill: seen.get('fill'),
    transform: seen.get('transform'),
    window: seen.get('window'),
    asOf: seen.get('as_of'),
    limitPerProject: seen.get('limit_per_project'),
  };
}

// Private

/** Inputs read from a query: one more than a formula may have, so the count can be refused. */
const MAX_READ_INPUTS = 8;

function parseInput(value: string): FormulaRequestInput['inputs'][number] {
  const parts = value.split(':');
  if (parts.length < 2 || parts.length > 3)
    throw new ApiError('bad-request', 'input: expected name:metric or name:metric:aggregation', {
      errors: [
        {
          param: 'input',
          message: `expected name:metric or name:metric:aggregation, got ${JSON.stringify(clipped(value))}`,
        },
      ],
    });
  const [name, metric, aggregation] = parts as [string, string, string | undefined];
  return { name, metric, aggregation };
}
