import { DEFAULT_CHANGES_LIMIT, MAX_CHANGES_LIMIT } from '../changes/changes-request.js';
import { ERROR_KINDS, type ErrorKind } from '../api/api-error.js';
import type { Catalog, MetricDefinition } from '../catalog/load-catalog.js';
import { problemType } from '../http/render-error.js';
import { usageOperationWith } from './openapi-cost.js';

/** `GET /v1/metrics`. */
export function catalogOperation(): Record<string, unknown> {
  return {
    operationId: 'listMetrics',
    summary:
      'The catalog: metrics, value kinds, default aggregations, allowed projects, their date coverage and last write',
    responses: {
      '200': {
        description: 'The catalog',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Catalog' } } },
      },
      ...errorResponses(['unauthorized', 'rate-limited', 'unavailable']),
    },
  };
}

/** `GET /v1/metrics/<name>`: the contract's parameters, then the extensions. */
export function metricOperation(metric: MetricDefinition): Record<string, unknown> {
  const point =
    metric.valueKind === 'decimal'
      ? 'DataPoint'
      : metric.extraFields.length > 0
        ? 'ExtendedIntegerDataPoint'
        : 'IntegerDataPoint';
  return {
    operationId: `get_${metric.name.replaceAll('-', '_')}`,
    summary: `Daily ${metric.name} (${metric.valueKind}) per project; default aggregation ${metric.defaultAggregation}`,
    parameters: [
      {
        name: 'project',
        in: 'query',
        required: metric.projectRequired,
        description:
          `One slug or several joined with commas (duplicates ` +
          `collapsed, case-sensitive). ${metric.projectRequired ? 'Required.' : 'Omitted means every project.'}` +
          ` ` +
          `Allowed: ${metric.projects.join(', ')}.`,
        style: 'form',
        explode: false,
        schema: { type: 'array', minItems: 1, items: { enum: [...metric.projects] } },
      },
      ...SERIES_PARAMETERS,
    ],
    responses: {
      '200': {
        description:
          'One key per requested project in request order, each an array of points ascending by date ' +
          '(with dry_run=true: its cost, a DryRun object).',
        headers: {
          ETag: { schema: { type: 'string' } },
          'Last-Modified': { description: 'The newest write to any series of the answer.', schema: { type: 'string' } },
          'Cache-Control': { schema: { type: 'string' } },
          ...RATE_LIMIT_HEADERS,
        },
        content: {
          'application/json': {
            schema: {
              anyOf: [
                {
                  type: 'object',
                  propertyNames: { enum: [...metric.projects] },
                  additionalProperties: { type: 'array', items: { $ref: `#/components/schemas/${point}` } },
                },
                DRY_RUN_ANSWER,
              ],
            },
          },
        },
      },
      '304': {
        description:
          'Not modified: If-None-Match names the ETag, or (without If-None-Match) ' +
          'If-Modified-Since is not earlier than Last-Modified.',
      },
      ...errorResponses([
        'bad-request',
        'unauthorized',
        'not-found',
        'method-not-allowed',
        'rate-limited',
        'unavailable',
      ]),
    },
  };
}

/** `GET /v1/export`. */
export function exportOperation(catalog: Catalog): Record<string, unknown> {
  return {
    operationId: 'exportSeries',
    summary: "Several metrics' series as long rows metric,project,date,value, streamed as a download (extension)",
    description:
      'Rows are ordered by metric and project as requested (catalog order when ' +
      "project is omitted), then date; each metric's dates and values equal its " +
      "/v1/metrics/<name> answer for the same parameters. Extra fields (etf-num-products' " +
      'spot, futures, leveraged) are left out unless extra=include, so only such ' +
      'an export imports back whole (`npm run import`). A value the series has ' +
      'none for is an empty CSV field, a JSON null.',
    parameters: [
      {
        name: 'metric',
        in: 'query',
        required: true,
        style: 'form',
        explode: false,
        description: 'One metric or several joined with commas.',
        schema: { type: 'array', minItems: 1, items: { enum: [...catalog.served.keys()] } },
      },
      {
        name: 'project',
        in: 'query',
        required: false,
        style: 'form',
        explode: false,
        description:
          'Projects, joined with commas; each must be allowed for every listed metric. ' +
          'Omitted means every project of each metric (a 400 where a metric requires ' +
          'projects).',
        schema: { type: 'array', minItems: 1, items: { type: 'string' } },
      },
      {
        name: 'format',
        in: 'query',
        required: false,
        description:
          'csv (with a header line; the default), ndjson (one object per line), parquet ' +
          '(a Parquet file) or arrow (an Arrow IPC stream). The last two hold typed columns: ' +
          'metric and project (dictionary-encoded strings), date (DATE), value (DOUBLE, null ' +
          'where the series has none) and, with extra=include, one DOUBLE column per extra field.',
        schema: { enum: ['csv', 'ndjson', 'parquet', 'arrow'] },
      },
      {
        name: 'extra',
        in: 'query',
        required: false,
        description:
          "include adds each point's extra fields as the import reads them: a fifth " +
          'CSV column extra_json (a JSON object, empty where the point has none) ' +
          'or an NDJSON key extra (absent where the point has none); omit (the default) ' +
          'leaves them out.',
        schema: { enum: ['omit', 'include'], default: 'omit' },
      },
      {
        name: 'include',
        in: 'query',
        required: false,
        description:
          "status adds each point's status as a last column: CSV status, NDJSON key status " +
          "(PROVISIONAL within the metric's stabilizationDays of the day's first write, else REVISED when " +
          'written more than once, else FINAL; judged at as_of when given). Omitted: the rows as always.',
        schema: { enum: ['status'] },
      },
      ...SERIES_PARAMETERS,
    ],
    responses: {
      '200': {
        description: 'The rows, as an attachment (with dry_run=true: their cost, a DryRun object).',
        headers: { 'Content-Disposition': { schema: { type: 'string' } }, ...RATE_LIMIT_HEADERS },
        content: {
          'text/csv': { schema: { type: 'string' } },
          'application/x-ndjson': { schema: { type: 'string' } },
          'application/json': { schema: DRY_RUN_ANSWER },
          'application/vnd.apache.parquet': { schema: { type: 'string', format: 'binary' } },
          'application/vnd.apache.arrow.stream': { schema: { type: 'string', format: 'binary' } },
        },
      },
      ...errorResponses(['bad-request', 'unauthorized', 'rate-limited', 'unavailable']),
    },
  };
}

/** `GET /v1/changes`. */
export function changesOperation(catalog: Catalog): Record<string, unknown> {
  return {
    operationId: 'listChanges',
    summary: 'Every write of a point since an instant, a page at a time (extension)',
    description:
      `One entry per write, in commit order: a value written twice appears twice, ` +
      `a removed point has value null. Follow \`next\` while it is present; \`cursor\` ` +
      `resumes later from where this page ended. Following cursors skips and ` +
      `repeats nothing, even while new writes land. Costs one rate-limit unit ` +
      `per ${DEFAULT_CHANGES_LIMIT} entries asked for.`,
    parameters: [
      {
        name: 'since',
        in: 'query',
        required: false,
        description:
          'Writes at or after this RFC 3339 instant (a date alone: the start of ' +
          'that UTC day). Required unless cursor is given; with a cursor, it must ' +
          "be the cursor's own.",
        schema: { type: 'string', examples: ['2026-06-30T00:00:00Z'] },
      },
      {
        name: 'limit',
        in: 'query',
        required: false,
        description: 'Entries per page.',
        schema: { type: 'integer', minimum: 1, maximum: MAX_CHANGES_LIMIT, default: DEFAULT_CHANGES_LIMIT },
      },
      {
        name: 'cursor',
        in: 'query',
        required: false,
        description: 'The next or cursor of an earlier page, unchanged.',
        schema: { type: 'string' },
      },
    ],
    responses: {
      '200': {
        description: 'A page of the feed.',
        headers: RATE_LIMIT_HEADERS,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['changes', 'cursor'],
              additionalProperties: false,
              properties: {
                changes: {
                  type: 'array',
                  items: {
                    type: 'object',
                    required: ['metric', 'project', 'date', 'value', 'updatedAt'],
                    additionalProperties: false,
                    properties: {
                      metric: { enum: catalog.metrics.map((m) => m.name) },
                      project: { enum: catalog.allProjects },
                      date: { $ref: '#/components/schemas/Date' },
                      value: {
                        type: ['number', 'null'],
                        description: 'The value written; null: the point was removed.',
                      },
                      extra: {
                        type: 'object',
                        description:
                          'The extra fields written with the value, for metrics that have them; ' +
                          'absent when it has none, and for a removal.',
                      },
                      updatedAt: {
                        type: 'string',
                        format: 'date-time',
                        description: 'When it was written, UTC with microseconds.',
                      },
                    },
                  },
                },
                next: { type: 'string', description: 'Present while more entries wait now: the next page.' },
                cursor: { type: 'string', description: 'Where to resume later.' },
              },
            },
          },
        },
      },
      ...errorResponses(['bad-request', 'unauthorized', 'rate-limited', 'unavailable']),
    },
  };
}

/** `GET /v1/usage`. */
export function usageOperation(): Record<string, unknown> {
  return usageOperationWith(errorResponses(['bad-request', 'unauthorized', 'rate-limited', 'unavailable']));
}

// Private

/** The series options' parameters, by reference: `/v1/metrics/<name>`, the export and `/v1/formula` take them. */
export const SERIES_PARAMETERS = [
  'StartDate',
  'EndDate',
  'Interval',
  'Aggregation',
  'Fill',
  'Transform',
  'Window',
  'AsOf',
  'DryRun',
  'Vintage',
  'LagDays',
  'LimitPerProject',
].map((name) => ({ $ref: `#/components/parameters/${name}` }));

/** What a series path answers to dry_run=true. */
const DRY_RUN_ANSWER = { $ref: '#/components/schemas/DryRun' };

/** IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers-10) sent on every authenticated answer. */
export const RATE_LIMIT_HEADERS = {
  RateLimit: {
    description: 'Remaining budget and seconds until it is full, e.g. "default";r=1190;t=2',
    schema: { type: 'string' },
  },
  'RateLimit-Policy': {
    description: "The key's budget: burst q over refill window w seconds",
    schema: { type: 'string' },
  },
};

/** Headers that come with particular errors. */
const ERROR_HEADERS: Partial<Record<ErrorKind, Record<string, unknown>>> = {
  unauthorized: { 'WWW-Authenticate': { schema: { type: 'string', const: 'ApiKey header="x-api-key"' } } },
  'method-not-allowed': { Allow: { schema: { type: 'string', const: 'GET, HEAD' } } },
  'rate-limited': {
    'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } },
    ...RATE_LIMIT_HEADERS,
  },
  unavailable: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } } },
};

/** The problem responses of `kinds`, each with the headers that come with it. */
export function errorResponses(kinds: readonly ErrorKind[]): Record<string, unknown> {
  return Object.fromEntries(
    kinds.map((kind) => [
      String(ERROR_KINDS[kind].status),
      {
        description: `${ERROR_KINDS[kind].title} (problem type ${problemType(kind)})`,
        ...(ERROR_HEADERS[kind] === undefined ? {} : { headers: ERROR_HEADERS[kind] }),
        content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
      },
    ]),
  );
}
