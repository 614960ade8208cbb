import { ApiError, type ParamError } from '../api/api-error.js';
import { readyDirectory } from '../api/unavailable.js';
import type { MetricDefinition } from '../catalog/load-catalog.js';
import { todayEpochDay } from '../dates.js';
import type { RestCall } from './rest-services.js';
import { streamBody, type BodyChunk } from '../http/send-json.js';
import { priceSeriesRequest } from '../limits/formula-cost.js';
import { planMetric } from '../formula/formula-plan.js';
import { streamSeries } from '../series/read-series.js';
import type { SeriesPlan } from '../series/series-plan.js';
import { validateSeriesRequest, type SeriesRequest } from '../series/series-request.js';
import type { ExportLayout } from '../series/series-sql.js';
import type { CancelSignal, Store } from '../db/store.js';
import { POINTS_PER_BATCH } from './metric-route.js';
import { COST_PARAMS, EXTENSION_PARAMS, readParameters, REST_PARAMS } from './parse-query.js';
import { answerDryRun, isDryRun } from './dry-run-answer.js';
import { clipped } from '../clipped.js';
import { arrowStream } from './export-arrow.js';
import { columnarExport, columnBatches, type ExportPlan } from './export-columns.js';
import { parquetFile } from './export-parquet.js';
import { priceVintageHistory } from '../limits/history-cost.js';

/** The formats of an export and how each is served. */
const FORMATS = {
  csv: {
    type: 'text/csv; charset=utf-8',
    header: 'metric,project,date,value\n',
    headerWithExtra: 'metric,project,date,value,extra_json\n',
  },
  ndjson: { type: 'application/x-ndjson', header: '', headerWithExtra: '' },
} as const;

type Format = keyof typeof FORMATS;

/** The typed formats (export-arrow.ts, export-parquet.ts): their media type and writer. */
const COLUMNAR_FORMATS = {
  parquet: { type: 'application/vnd.apache.parquet', write: parquetFile },
  arrow: { type: 'application/vnd.apache.arrow.stream', write: arrowStream },
} as const;

type ColumnarFormat = keyof typeof COLUMNAR_FORMATS;

/** The values of `format`, the first the default. */
const FORMAT_NAMES = ['csv', 'ndjson', 'parquet', 'arrow'] as const satisfies readonly (Format | ColumnarFormat)[];

/**
 * Whether rows carry the metric's extra fields (etf-num-products' spot, futures,
 * leveraged): `include` adds them as the import reads them (CSV column `extra_json`,
 * NDJSON key `extra`), so an export imports back whole. Opt-in, because an export without
 * the parameter keeps the four columns it always had.
 */
const EXTRA = ['omit', 'include'] as const;

type Extra = (typeof EXTRA)[number];

/**
 * `GET /v1/export?metric=a,b&project=x,y&start_date&end_date&format=csv|ndjson|parquet|arrow`
 * plus the series options: long rows `metric,project,date,value`, by metric and project in
 * the order asked (the catalog's when omitted), then date, as a download (Parquet and Arrow:
 * the same rows as typed columns, export-columns.ts). Each metric is one
 * request of the series path (the same validation, plan and SQL as `/v1/metrics/<name>`),
 * so its rows equal that answer's points; the rows stream a few projects per database
 * round trip, so memory stays flat for any size, and a client that leaves cancels the query.
 */
export async function handleExport(call: RestCall): Promise<void> {
  const { req, res, services, query, signal, meter } = call;
  const params = readParameters(query, [
    'metric',
    'project',
    'start_date',
    'end_date',
    'format',
    'extra',
    'include',
    ...EXTENSION_PARAMS,
    ...COST_PARAMS,
  ]);
  const format = choice('format', params.get('format'), FORMAT_NAMES);
  const extra = choice('extra', params.get('extra'), EXTRA);
  const withStatus = includesStatus(params.get('include'));
  if (withStatus && isColumnar(format)) {
    throw badRequest([
      { param: 'include', message: `status is a column of the csv and ndjson formats, not of ${format}` },
    ]);
  }
  const requests = exportRequests(services.catalog.served, params);
  const today = todayEpochDay(services.clock());
  const prices = requests.map((r) => priceSeriesRequest(r, today, (name, slug) => services.storedSpans.of(name, slug)));
  const directory = readyDirectory(services.state);
  let history = 0;
  for (const r of requests) history += await priceVintageHistory(services.reads, r, directory, signal);
  const cost = prices.reduce((units, price) => units + price.cost, 0) + history;
  if (isDryRun(call)) return answerDryRun(call, cost);
  await meter.charge(cost);
  const plans = requests.map((r, i) => ({ plan: planMetric(r, directory), buckets: prices[i]!.span.buckets }));
  res.setHeader('content-disposition', `attachment; filename="metrics-export.${format}"`);
  res.setHeader('cache-control', 'no-store');
  // The first rows are read before anything is sent, so a busy or absent database is still a 503.
  const chunks = isColumnar(format)
    ? columnar(services.reads, plans, format, extra, signal)
    : rows(services.reads, plans, format, extra, withStatus, signal);
  const type = isColumnar(format) ? COLUMNAR_FORMATS[format].type : FORMATS[format].type;
  try {
    const first = await chunks.next();
    const stalledAfterMs = services.config.stalledClientSeconds * 1000;
    const body = after(first.done ? undefined : first.value, chunks);
    await streamBody(req, res, type, body, stalledAfterMs);
  } finally {
    await chunks.return(undefined);
  }
}

// Private

/** A parameter with a few named values: the first when omitted, else one of them, else a 400 naming them. */
function choice<const T extends readonly string[]>(param: string, value: string | undefined, allowed: T): T[number] {
  if (value === undefined) return allowed[0]!;
  if (allowed.includes(value)) return value;
  throw badRequest([
    { param, message: `expected one of ${allowed.join(', ')}, got ${JSON.stringify(clipped(value))}` },
  ]);
}

/** One validated series request per listed metric; every problem with any of them in one 400. */
function exportRequests(metrics: ReadonlyMap<string, MetricDefinition>, params: Map<string, string>): SeriesRequest[] {
  const names = params.get('metric');
  if (names === undefined || names === '')
    throw badRequest([
      {
        param: 'metric',
        message: `name one metric or several joined with commas; known: ${[...metrics.keys()].join(', ')}`,
      },
    ]);
  const unknown = [...new Set(names.split(','))].filter((name) => !metrics.has(name));
  if (unknown.length > 0) {
    throw badRequest(
      unknown.slice(0, 5).map((name) => ({
        param: 'metric',
        message: `unknown metric ${JSON.stringify(clipped(name))}; GET /v1/metrics lists them`,
      })),
    );
  }
  const project = params.get('project');
  const requests: SeriesRequest[] = [];
  const errors: ParamError[] = [];
  for (const name of new Set(names.split(','))) {
    try {
      requests.push(
        validateSeriesRequest(
          {
            metric: metrics.get(name)!,
            projects: project?.split(','),
            from: params.get('start_date'),
            to: params.get('end_date'),
            interval: params.get('interval'),
            aggregation: params.get('aggregation'),
            fill: params.get('fill'),
            transform: params.get('transform'),
            window: params.get('window'),
            asOf: params.get('as_of'),
            vintage: params.get('vintage'),
            lagDays: params.get('lag_days'),
            limitPerProject: params.get('limit_per_project'),
          },
          REST_PARAMS,
        ),
      );
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      // Parameter problems shared by every metric (a bad date, say) are reported once.
      for (const e of error.errors) if (!errors.some((seen) => seen.message === e.message)) errors.push(e);
    }
  }
  if (errors.length > 0) throw badRequest(errors);
  return requests;
}

/** The export's header, then its rows; the header comes with the first batch of rows (or their absence). */
async function* rows(
  store: Store,
  plans: readonly { plan: SeriesPlan; buckets: number }[],
  format: Format,
  extra: Extra,
  withStatus: boolean,
  signal: CancelSignal,
): AsyncGenerator<BodyChunk> {
  let header: string | undefined = extra === 'include' ? FORMATS[format].headerWithExtra : FORMATS[format].header;
  if (withStatus && format === 'csv') header = header.replace(/\n$/, ',status\n');
  const layout: ExportLayout = `${format}${extra === 'include' ? '-extra' : ''}${withStatus ? '-status' : ''}`;
  for (const { plan, buckets } of plans) {
    const perBatch = Math.max(1, Math.floor(POINTS_PER_BATCH / Math.max(1, buckets)));
    for await (const batch of streamSeries(store, plan, layout, perBatch, signal)) {
      if (header !== undefined) yield header;
      header = undefined;
      for (const row of batch) yield row.points;
    }
  }
  if (header !== undefined) yield header;
}

function isColumnar(format: Format | ColumnarFormat): format is ColumnarFormat {
  return format in COLUMNAR_FORMATS;
}

/** The export as typed columns in a binary format; it yields nothing before the first rows are read. */
function columnar(
  store: Store,
  plans: readonly ExportPlan[],
  format: ColumnarFormat,
  extra: Extra,
  signal: CancelSignal,
): AsyncGenerator<BodyChunk> {
  const exported = columnarExport(plans, extra === 'include');
  return COLUMNAR_FORMATS[format].write(exported, columnBatches(store, plans, exported, signal));
}

/**
 * Columns added on request: `include=status` adds each row's PointStatus (CSV column
 * `status`, NDJSON key `status`). Without it the rows are exactly as they always were.
 */
const INCLUDES = ['status'] as const;

function includesStatus(value: string | undefined): boolean {
  if (value === undefined) return false;
  const names = value.split(',');
  const unknown = names.filter((name) => !(INCLUDES as readonly string[]).includes(name));
  if (unknown.length > 0 || names.length > INCLUDES.length) {
    throw badRequest([
      {
        param: 'include',
        message:
          `expected a comma-separated list of ${INCLUDES.join(', ')}, got ` +
          `${JSON.stringify(clipped(unknown[0] ?? value))}`,
      },
    ]);
  }
  return names.includes('status');
}

/** `first` (when there is one), then the rest of `chunks`. */
async function* after(first: BodyChunk | undefined, chunks: AsyncIterator<BodyChunk>): AsyncGenerator<BodyChunk> {
  if (first === undefined) return;
  yield first;
  for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value;
}

function badRequest(errors: readonly ParamError[]): ApiError {
  return new ApiError('bad-request', errors.map((e) => `${e.param}: ${e.message}`).join('; '), {
    errors: errors.slice(0, 6),
  });
}
