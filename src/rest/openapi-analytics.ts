import { DEFAULT_TOP, MAX_TOP, RANK_BY, RANK_ORDERS } from '../analytics/rank-request.js';
import { TOTAL_OPS } from '../analytics/total-request.js';
import type { Catalog } from '../catalog/load-catalog.js';
import { errorResponses, RATE_LIMIT_HEADERS } from './openapi-operations.js';

/** `GET /v1/groups`. */
export function groupsOperation(catalog: Catalog): Record<string, unknown> {
  return {
    operationId: 'listGroups',
    summary: "Named groups of projects; for a metric, a group's members are its projects the metric allows (extension)",
    responses: {
      '200': {
        description: 'The groups, in catalog order.',
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['groups'],
              additionalProperties: false,
              properties: {
                groups: {
                  type: 'array',
                  items: {
                    type: 'object',
                    required: ['name', 'description', 'projects'],
                    additionalProperties: false,
                    properties: {
                      name: { enum: catalog.groups.map((g) => g.name) },
                      description: { type: 'string' },
                      projects: { type: 'array', items: { enum: catalog.allProjects } },
                    },
                  },
                },
              },
            },
          },
        },
      },
      ...errorResponses(['bad-request', 'unauthorized', 'rate-limited', 'unavailable']),
    },
  };
}

/** `GET /v1/totals/{name}`. */
export function totalOperation(catalog: Catalog): Record<string, unknown> {
  return {
    operationId: 'getTotal',
    summary: 'A metric totalled across a group or projects, each bucket naming the members it misses (extension)',
    description:
      'Each member is bucketed with the aggregation and filled first; then `op` combines the members that have a ' +
      'value in the bucket; then `transform` applies to the total. A member is expected in a bucket its stored ' +
      'days span (first to last stored day, as of `as_of`): a series not started yet is not missing, an expected ' +
      'member without a value is. With fill=none a bucket without any value is left out, with the other fills ' +
      'every bucket with an expected member is given. Priced like the members\u2019 series.',
    parameters: [
      metricName(catalog),
      ...memberParameters(catalog),
      {
        name: 'op',
        in: 'query',
        required: false,
        description: 'How members combine: count counts members with a value; median is exact.',
        schema: { enum: [...TOTAL_OPS], default: 'sum' },
      },
      ...['StartDate', 'EndDate', 'Interval', 'Aggregation', 'Fill', 'Transform', 'Window', 'AsOf'].map((name) => ({
        $ref: `#/components/parameters/${name}`,
      })),
      {
        name: 'require_complete',
        in: 'query',
        required: false,
        description: 'true: a bucket with a missing member has a null value.',
        schema: { enum: ['true', 'false'], default: 'false' },
      },
      { $ref: '#/components/parameters/DryRun' },
    ],
    responses: {
      '200': {
        description: 'The total, one point per bucket ascending.',
        headers: RATE_LIMIT_HEADERS,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['metric', 'op', 'expected', 'points'],
              additionalProperties: false,
              properties: {
                metric: { enum: catalog.metrics.map((m) => m.name) },
                op: { enum: [...TOTAL_OPS] },
                expected: {
                  type: 'array',
                  items: { enum: catalog.allProjects },
                  description: 'The members, in order.',
                },
                points: {
                  type: 'array',
                  items: {
                    type: 'object',
                    required: ['date', 'value', 'contributors', 'missing'],
                    additionalProperties: false,
                    properties: {
                      date: { $ref: '#/components/schemas/Date' },
                      value: {
                        type: ['number', 'null'],
                        description:
                          'A whole number for an integer metric under sum, min and max (with a whole aggregation).',
                      },
                      contributors: { type: 'integer', minimum: 0, description: 'Members with a value.' },
                      missing: {
                        type: 'array',
                        items: { enum: catalog.allProjects },
                        description: 'Expected members without a value, in member order.',
                      },
                    },
                  },
                },
              },
            },
          },
        },
      },
      ...errorResponses(['bad-request', 'unauthorized', 'not-found', 'rate-limited', 'unavailable']),
    },
  };
}

/** `GET /v1/rank/{name}`. */
export function rankOperation(catalog: Catalog): Record<string, unknown> {
  const nullableNumber = (description: string) => ({ type: ['number', 'null'], description });
  return {
    operationId: 'getRanking',
    summary: 'Members of a group or projects ranked over a window, beside the window before it (extension)',
    description:
      "`value` is a member's days in the window aggregated into one value; the previous window is as many days " +
      'just before start_date. Ties are ordered by slug (code points); a member without data in the window is ' +
      'unranked; ranking by a change, a member without a previous value ranks after the others. Priced as a ' +
      'yearly series of the days read.',
    parameters: [
      metricName(catalog),
      ...memberParameters(catalog),
      {
        name: 'start_date',
        in: 'query',
        required: true,
        description: 'First day of the window, inclusive.',
        schema: { $ref: '#/components/schemas/Date' },
      },
      {
        name: 'end_date',
        in: 'query',
        required: true,
        description: 'Last day of the window, inclusive.',
        schema: { $ref: '#/components/schemas/Date' },
      },
      {
        name: 'by',
        in: 'query',
        required: false,
        description: 'The value, its change from the previous window, or that change in percent.',
        schema: { enum: [...RANK_BY], default: 'value' },
      },
      {
        name: 'order',
        in: 'query',
        required: false,
        description: 'desc ranks the largest first.',
        schema: { enum: [...RANK_ORDERS], default: 'desc' },
      },
      {
        name: 'top',
        in: 'query',
        required: false,
        description: 'Rows to answer.',
        schema: { type: 'integer', minimum: 1, maximum: MAX_TOP, default: DEFAULT_TOP },
      },
      { $ref: '#/components/parameters/Aggregation' },
      { $ref: '#/components/parameters/AsOf' },
      { $ref: '#/components/parameters/DryRun' },
    ],
    responses: {
      '200': {
        description: 'The ranking.',
        headers: RATE_LIMIT_HEADERS,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: [
                'metric',
                'start_date',
                'end_date',
                'previous_start_date',
                'previous_end_date',
                'rows',
                'unranked',
              ],
              additionalProperties: false,
              properties: {
                metric: { enum: catalog.metrics.map((m) => m.name) },
                start_date: { $ref: '#/components/schemas/Date' },
                end_date: { $ref: '#/components/schemas/Date' },
                previous_start_date: { $ref: '#/components/schemas/Date' },
                previous_end_date: { $ref: '#/components/schemas/Date' },
                rows: {
                  type: 'array',
                  items: {
                    type: 'object',
                    additionalProperties: false,
                    required: [
                      'rank',
                      'project',
                      'slug',
                      'value',
                      'previous_value',
                      'previous_rank',
                      'change',
                      'change_percent',
                      'share_of_total',
                    ],
                    properties: {
                      rank: { type: 'integer', minimum: 1 },
                      project: { enum: catalog.allProjects },
                      slug: { type: 'string' },
                      value: { type: 'number' },
                      previous_value: nullableNumber('Null without data in the previous window.'),
                      previous_rank: { type: ['integer', 'null'], minimum: 1 },
                      change: nullableNumber('value minus previous_value.'),
                      change_percent: nullableNumber('The change in percent of previous_value; null from 0 or none.'),
                      share_of_total: nullableNumber('Percent of the sum of ranked values; sum and last only.'),
                    },
                  },
                },
                unranked: { type: 'array', items: { enum: catalog.allProjects } },
              },
            },
          },
        },
      },
      ...errorResponses(['bad-request', 'unauthorized', 'not-found', 'rate-limited', 'unavailable']),
    },
  };
}

// Private

function metricName(catalog: Catalog): Record<string, unknown> {
  return {
    name: 'name',
    in: 'path',
    required: true,
    description: 'The metric.',
    schema: { enum: catalog.metrics.map((m) => m.name) },
  };
}

function memberParameters(catalog: Catalog): Record<string, unknown>[] {
  return [
    {
      name: 'group',
      in: 'query',
      required: false,
      description: 'A group (GET /v1/groups): its projects the metric allows. Not together with project.',
      schema: { enum: catalog.groups.map((g) => g.name) },
    },
    {
      name: 'project',
      in: 'query',
      required: false,
      description: 'The members, joined with commas, instead of a group; neither means every project of the metric.',
      style: 'form',
      explode: false,
      schema: { type: 'array', minItems: 1, items: { enum: catalog.allProjects } },
    },
  ];
}
