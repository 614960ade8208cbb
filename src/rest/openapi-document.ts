import type { Catalog, MetricDefinition } from '../catalog/load-catalog.js';
import { ERROR_KINDS, type ErrorKind } from '../api/api-error.js';
import { problemType } from '../http/render-error.js';

/** Error responses a metric endpoint can give, per DECISIONS.md. */
const METRIC_ERRORS: readonly ErrorKind[] = ['bad-request', 'unauthorized', 'not-found', 'method-not-allowed', 'rate-limited', 'unavailable'];

/**
 * The OpenAPI 3.1 description of the REST contract, generated from the catalog: one
 * path per metric with its slugs as an enum, and every error response.
 */
export function createOpenApiDocument(catalog: Catalog): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Metrics time-series API',
      version: '1.0.0',
      description:
        'Daily metric time series per project. Every request needs the `x-api-key` header. Dates are `YYYY-MM-DD`, both bounds inclusive; points are ascending by date.',
    },
    servers: [{ url: '/' }],
    security: [{ apiKey: [] }],
    paths: {
      '/v1/metrics': {
        get: {
          operationId: 'listMetrics',
          summary: 'The catalog: metrics, value kinds, allowed projects and their date coverage',
          responses: { '200': { description: 'The catalog', content: { 'application/json': { schema: { $ref: '#/components/schemas/Catalog' } } } }, ...errorResponses(['unauthorized', 'rate-limited', 'unavailable']) },
        },
      },
      ...Object.fromEntries(catalog.metrics.map((m) => [`/v1/metrics/${m.name}`, { get: metricOperation(m) }])),
    },
    components: {
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' } },
      schemas: {
        Date: { type: 'string', format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
        DataPoint: {
          type: 'object',
          required: ['date', 'value'],
          properties: { date: { $ref: '#/components/schemas/Date' }, value: { type: 'number' } },
          additionalProperties: false,
        },
        IntegerDataPoint: {
          type: 'object',
          required: ['date', 'value'],
          properties: { date: { $ref: '#/components/schemas/Date' }, value: { type: 'integer' } },
          additionalProperties: false,
        },
        ExtendedIntegerDataPoint: {
          type: 'object',
          required: ['date', 'value'],
          properties: { date: { $ref: '#/components/schemas/Date' }, value: { type: 'integer' } },
          additionalProperties: true,
        },
        Problem: {
          type: 'object',
          required: ['type', 'title', 'status', 'detail'],
          properties: {
            type: { type: 'string' },
            title: { type: 'string' },
            status: { type: 'integer' },
            detail: { type: 'string' },
            errors: {
              type: 'array',
              items: { type: 'object', required: ['param', 'message'], properties: { param: { type: 'string' }, message: { type: 'string' } } },
            },
          },
        },
        Catalog: {
          type: 'object',
          required: ['metrics'],
          properties: {
            metrics: {
              type: 'array',
              items: {
                type: 'object',
                required: ['name', 'path', 'valueKind', 'projectRequired', 'projects'],
                properties: {
                  name: { type: 'string' },
                  path: { type: 'string' },
                  valueKind: { enum: ['integer', 'decimal'] },
                  projectRequired: { type: 'boolean' },
                  projects: {
                    type: 'array',
                    items: {
                      type: 'object',
                      required: ['slug', 'firstDate', 'lastDate'],
                      properties: { slug: { type: 'string' }, firstDate: { type: ['string', 'null'] }, lastDate: { type: ['string', 'null'] } },
                    },
                  },
                },
              },
            },
          },
        },
      },
    },
  };
}

// Private

function metricOperation(metric: MetricDefinition): Record<string, unknown> {
  const point = metric.valueKind === 'decimal' ? 'DataPoint' : metric.extraFields.length > 0 ? 'ExtendedIntegerDataPoint' : 'IntegerDataPoint';
  const projectSlugs = metric.projects.join(', ');
  return {
    operationId: `get_${metric.name.replaceAll('-', '_')}`,
    summary: `Daily ${metric.name} (${metric.valueKind}) per project`,
    parameters: [
      {
        name: 'project',
        in: 'query',
        required: metric.projectRequired,
        description: `One slug or several joined with commas (duplicates collapsed, case-sensitive). ${metric.projectRequired ? 'Required.' : 'Omitted means every project.'} Allowed: ${projectSlugs}.`,
        style: 'form',
        explode: false,
        schema: { type: 'array', minItems: 1, items: { enum: [...metric.projects] } },
      },
      { name: 'start_date', in: 'query', required: false, description: 'First day, inclusive; omitted means the earliest stored day.', schema: { $ref: '#/components/schemas/Date' } },
      { name: 'end_date', in: 'query', required: false, description: 'Last day, inclusive; omitted means the latest stored day.', schema: { $ref: '#/components/schemas/Date' } },
    ],
    responses: {
      '200': {
        description: 'One key per requested project in request order, each an array of points ascending by date.',
        headers: {
          ETag: { schema: { type: 'string' } },
          'Cache-Control': { schema: { type: 'string' } },
          ...RATE_LIMIT_HEADERS,
        },
        content: {
          'application/json': {
            schema: {
              type: 'object',
              propertyNames: { enum: [...metric.projects] },
              additionalProperties: { type: 'array', items: { $ref: `#/components/schemas/${point}` } },
            },
          },
        },
      },
      '304': { description: 'Not modified (the If-None-Match ETag still matches).' },
      ...errorResponses(METRIC_ERRORS),
    },
  };
}

/** IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers-10) sent on every authenticated answer. */
const RATE_LIMIT_HEADERS = {
  RateLimit: { description: 'Remaining budget and seconds until it is full, e.g. "default";r=1190;t=2', schema: { type: 'string' } },
  'RateLimit-Policy': { description: 'The key\'s budget: burst q over refill window w seconds', schema: { type: 'string' } },
};

/** Headers that come with particular errors. */
const ERROR_HEADERS: Partial<Record<ErrorKind, Record<string, unknown>>> = {
  unauthorized: { 'WWW-Authenticate': { schema: { type: 'string', const: 'ApiKey header="x-api-key"' } } },
  'method-not-allowed': { Allow: { schema: { type: 'string', const: 'GET, HEAD' } } },
  'rate-limited': { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } }, ...RATE_LIMIT_HEADERS },
  unavailable: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } } },
};

function errorResponses(kinds: readonly ErrorKind[]): Record<string, unknown> {
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
