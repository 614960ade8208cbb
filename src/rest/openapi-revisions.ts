import type { Catalog } from '../catalog/load-catalog.js';
import { MAX_LAG, MAX_LAGS, MAX_TRIANGLE_DAYS } from '../revisions/triangle-request.js';
import { DEFAULT_LOOKBACK_DAYS, MAX_LOOKBACK_DAYS, MIN_LOOKBACK_DAYS } from '../revisions/revision-profiles.js';
import { errorResponses, RATE_LIMIT_HEADERS } from './openapi-operations.js';

/** `GET /v1/revisions/{name}`: one project's revision triangle. */
export function revisionsOperation(catalog: Catalog): Record<string, unknown> {
  const number = { type: ['number', 'null'] };
  return {
    operationId: 'getRevisionTriangle',
    summary: "One project's revision triangle: each day's value as known at each lag, and its revisions (extension)",
    description:
      'One row per day ever written in the range, ascending. Priced by its cells and the history rows it reads: ' +
      'max(1, ceil(days × (lags + 1) / 365 + (days + history rows) / 3650)).',
    parameters: [
      metricPathParameter(catalog),
      {
        name: 'project',
        in: 'query',
        required: true,
        description: 'One project of the metric.',
        schema: { type: 'string' },
      },
      {
        name: 'start_date',
        in: 'query',
        required: true,
        description: `First day, inclusive; at most ${MAX_TRIANGLE_DAYS} days before end_date.`,
        schema: { $ref: '#/components/schemas/Date' },
      },
      {
        name: 'end_date',
        in: 'query',
        required: true,
        description: 'Last day, inclusive.',
        schema: { $ref: '#/components/schemas/Date' },
      },
      {
        name: 'lags',
        in: 'query',
        required: true,
        style: 'form',
        explode: false,
        description: `Days after each day, strictly increasing, 1 to ${MAX_LAGS} of them, each 0 to ${MAX_LAG}.`,
        schema: {
          type: 'array',
          minItems: 1,
          maxItems: MAX_LAGS,
          items: { type: 'integer', minimum: 0, maximum: MAX_LAG },
        },
        example: [0, 1, 7, 30],
      },
      { $ref: '#/components/parameters/DryRun' },
    ],
    responses: {
      '200': {
        description: 'The triangle (with dry_run=true: its cost, a DryRun object).',
        headers: RATE_LIMIT_HEADERS,
        content: {
          'application/json': {
            schema: {
              oneOf: [
                {
                  type: 'object',
                  required: ['metric', 'project', 'lags', 'rows'],
                  additionalProperties: false,
                  properties: {
                    metric: { type: 'string' },
                    project: { type: 'string' },
                    lags: { type: 'array', items: { type: 'integer' } },
                    rows: {
                      type: 'array',
                      items: {
                        type: 'object',
                        required: [
                          'date',
                          'firstWrittenAt',
                          'values',
                          'latest',
                          'revisionCount',
                          'maxAbsRevisionPercent',
                        ],
                        additionalProperties: false,
                        properties: {
                          date: { $ref: '#/components/schemas/Date' },
                          firstWrittenAt: {
                            type: 'string',
                            format: 'date-time',
                            description: 'The first write, UTC with microseconds: usable as as_of.',
                          },
                          values: {
                            type: 'array',
                            items: number,
                            description:
                              'Per lag: the value standing at the end of UTC day date + lag; null where none.',
                          },
                          latest: { ...number, description: 'The value served now; null when the day was removed.' },
                          revisionCount: { type: 'integer', minimum: 0, description: 'Writes after the first.' },
                          maxAbsRevisionPercent: {
                            ...number,
                            description:
                              'The largest change of a revision relative to the value it replaced, in percent.',
                          },
                        },
                      },
                    },
                  },
                },
                { $ref: '#/components/schemas/DryRun' },
              ],
            },
          },
        },
      },
      ...errorResponses(['bad-request', 'unauthorized', 'not-found', 'rate-limited', 'unavailable']),
    },
  };
}

/** `GET /v1/metrics/{name}/profile`: a metric's measured revision profile. */
export function profileOperation(catalog: Catalog): Record<string, unknown> {
  const number = { type: ['number', 'null'] };
  return {
    operationId: 'getRevisionProfile',
    summary: "How a metric's values were revised over its trailing days of data, measured (extension)",
    description:
      'Over every project of the metric and the days after (its last day written − lookback_days). Kept between ' +
      'writes to the metric and computed again at most once a minute (computedAt). One unit when kept, else ' +
      'max(1, ceil(projects × lookback_days / 3650)).',
    parameters: [
      metricPathParameter(catalog),
      {
        name: 'lookback_days',
        in: 'query',
        required: false,
        description: 'Days of data in the window.',
        schema: {
          type: 'integer',
          minimum: MIN_LOOKBACK_DAYS,
          maximum: MAX_LOOKBACK_DAYS,
          default: DEFAULT_LOOKBACK_DAYS,
        },
      },
      { $ref: '#/components/parameters/DryRun' },
    ],
    responses: {
      '200': {
        description: 'The profile (with dry_run=true: its cost, a DryRun object).',
        headers: RATE_LIMIT_HEADERS,
        content: {
          'application/json': {
            schema: {
              oneOf: [
                {
                  type: 'object',
                  required: ['metric', 'lookbackDays', 'revisionProfile'],
                  additionalProperties: false,
                  properties: {
                    metric: { type: 'string' },
                    lookbackDays: { type: 'integer' },
                    revisionProfile: {
                      type: 'object',
                      additionalProperties: false,
                      required: [
                        'days',
                        'revisedShare',
                        'medianRevisionDelayHours',
                        'p95AbsRevisionPercent',
                        'stableAfterDays',
                        'computedAt',
                      ],
                      properties: {
                        days: { type: 'integer', description: 'Days (project × date) in the window ever written.' },
                        revisedShare: {
                          ...number,
                          description: 'The fraction, 0 to 1, of days written more than once.',
                        },
                        medianRevisionDelayHours: {
                          ...number,
                          description: "Median hours from a day's first write to its later writes.",
                        },
                        p95AbsRevisionPercent: {
                          ...number,
                          description:
                            "95th percentile of revisions' changes relative to the value replaced, in percent.",
                        },
                        stableAfterDays: {
                          type: ['integer', 'null'],
                          description:
                            'Smallest K such that 95 % of days never change after the end of D + K; null under 30 days.',
                        },
                        computedAt: { type: 'string', format: 'date-time' },
                      },
                    },
                  },
                },
                { $ref: '#/components/schemas/DryRun' },
              ],
            },
          },
        },
      },
      ...errorResponses(['bad-request', 'unauthorized', 'not-found', 'rate-limited', 'unavailable']),
    },
  };
}

// Private

function metricPathParameter(catalog: Catalog): Record<string, unknown> {
  return {
    name: 'name',
    in: 'path',
    required: true,
    description: 'The metric.',
    schema: { enum: catalog.metrics.map((m) => m.name) },
  };
}
