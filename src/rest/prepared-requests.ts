import type { MetricDefinition } from '../catalog/load-catalog.js';
import type { ProjectDirectory } from '../db/project-directory.js';
import { priceSeriesRequest } from '../limits/formula-cost.js';
import type { PricedRequest } from '../limits/request-cost.js';
import { planMetric } from '../formula/formula-plan.js';
import type { StoredSpans } from '../limits/stored-spans.js';
import type { SeriesPlan } from '../series/series-plan.js';
import { validateSeriesRequest, type SeriesRequest } from '../series/series-request.js';
import { parseMetricQuery, REST_PARAMS } from './parse-query.js';

/** A metric request parsed and validated, ready to be priced and planned. */
export interface PreparedRequest {
  /** `<metric>?<raw query>`: what the request is kept under here and in the response cache. */
  key: string;
  request: SeriesRequest;
  /**
   * What it costs against the caller's rate limit and the span it is sized by, given what its series hold (the same
   * while their stored days are).
   */
  price(spans: StoredSpans): PricedRequest;
  /** The request's plan with the given directory's project ids (the same plan while the directory is). */
  plan(directory: ProjectDirectory): SeriesPlan;
}

/** Prepares a metric request from its raw query string: parse → validate, or a 400 ApiError. */
export type PrepareRequest = (metric: MetricDefinition, query: string, today: number) => PreparedRequest;

/** Queries longer than this are prepared afresh each time, so a stream of huge URLs cannot fill the memo. */
const MAX_KEPT_QUERY_LENGTH = 1024;
/** Distinct queries kept; the memo starts again when full. */
const MAX_KEPT = 1000;

/**
 * {@link PrepareRequest} with the successful outcomes kept per metric and raw query string.
 * Clients and dashboards repeat the same URLs, and the steps are pure given the metric,
 * the query and the day (an omitted or later end date means today), a price only on the
 * series' stored days and a plan only on the project directory, so a repeated request
 * skips them: they were about 15 µs and
 * most of the garbage of the 3x365 bench request (docs/performance.md). The memo starts
 * again when the day changes; a refused request is checked afresh every time, and what
 * is kept is never changed by its users.
 */
export function createRequestPreparer(): PrepareRequest {
  let kept = new Map<string, PreparedRequest>();
  let keptFor = Number.NaN;
  return (metric, query, today) => {
    if (today !== keptFor) {
      kept = new Map();
      keptFor = today;
    }
    const key = `${metric.name}?${query}`;
    const found = kept.get(key);
    // The metric is compared too: a catalog loaded again brings new definitions.
    if (found !== undefined && found.request.metric === metric) return found;
    const prepared = prepare(key, metric, query, today);
    if (query.length <= MAX_KEPT_QUERY_LENGTH) {
      if (kept.size >= MAX_KEPT) kept.clear();
      kept.set(key, prepared);
    }
    return prepared;
  };
}

// Private

function prepare(key: string, metric: MetricDefinition, query: string, today: number): PreparedRequest {
  const request = validateSeriesRequest(parseMetricQuery(metric, query), REST_PARAMS);
  let priced: { spans: StoredSpans; generation: number; price: PricedRequest } | undefined;
  let planned: { directory: ProjectDirectory; plan: SeriesPlan } | undefined;
  return {
    key,
    request,
    price: (spans) => {
      if (priced?.spans !== spans || priced.generation !== spans.generation) {
        const price = priceSeriesRequest(request, today, (name, slug) => spans.of(name, slug));
        priced = { spans, generation: spans.generation, price };
      }
      return priced.price;
    },
    plan: (directory) => {
      if (planned?.directory !== directory) planned = { directory, plan: planMetric(request, directory) };
      return planned.plan;
    },
  };
}
