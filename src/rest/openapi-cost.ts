import { USAGE_DAYS, USAGE_HOURS } from '../limits/usage-counter.js';

/** The `dry_run` parameter every series path takes (dry-run-answer.ts). */
export const DRY_RUN_PARAMETER = {
  name: 'dry_run',
  in: 'query',
  required: false,
  description:
    'Extension. `true`: answer only what the request would cost (a DryRun object, 200 application/json), ' +
    "after validation and pricing, reading no data and taking nothing from the key's balance; dry runs are " +
    "counted in a bucket of their own per key, as large as the key's, so they are never unlimited. " +
    '`false` or omitted: the request itself. Any other value is a 400.',
  schema: { type: 'boolean', default: false },
} as const;

/** The schemas of dry runs and `/v1/usage`. */
export const COST_SCHEMAS = {
  RateLimitState: {
    type: 'object',
    required: ['limit', 'remaining', 'resetSeconds'],
    description: "The key's bucket now; every field null for a key without a limit.",
    additionalProperties: false,
    properties: {
      limit: { type: ['integer', 'null'], description: 'The most units the key can spend at once (its burst).' },
      remaining: { type: ['integer', 'null'], description: 'Whole units left now.' },
      resetSeconds: { type: ['integer', 'null'], description: 'Seconds until the bucket is full again.' },
    },
  },
  DryRun: {
    type: 'object',
    required: ['cost', 'rateLimit'],
    additionalProperties: false,
    properties: {
      cost: {
        type: 'object',
        required: ['units'],
        additionalProperties: false,
        properties: {
          units: {
            type: 'integer',
            minimum: 1,
            description: "What the request would take from the key's bucket (a price above the burst takes the burst).",
          },
        },
      },
      rateLimit: { $ref: '#/components/schemas/RateLimitState' },
    },
  },
  Usage: {
    type: 'object',
    required: ['rateLimit', 'hours', 'days'],
    additionalProperties: false,
    properties: {
      rateLimit: { $ref: '#/components/schemas/RateLimitState' },
      hours: {
        type: 'array',
        minItems: USAGE_HOURS,
        maxItems: USAGE_HOURS,
        description: `The last ${USAGE_HOURS} UTC hours, oldest first, the current one last; an hour without requests has 0.`,
        items: {
          type: 'object',
          required: ['hour', 'units', 'requests'],
          additionalProperties: false,
          properties: {
            hour: { type: 'string', format: 'date-time', description: "The hour's start, e.g. 2026-06-30T12:00:00Z." },
            units: { type: 'integer', minimum: 0 },
            requests: { type: 'integer', minimum: 0 },
          },
        },
      },
      days: {
        type: 'array',
        minItems: USAGE_DAYS,
        maxItems: USAGE_DAYS,
        description: `The last ${USAGE_DAYS} UTC days, oldest first, today last; a day without requests has 0.`,
        items: {
          type: 'object',
          required: ['date', 'units', 'requests'],
          additionalProperties: false,
          properties: {
            date: { $ref: '#/components/schemas/Date' },
            units: { type: 'integer', minimum: 0 },
            requests: { type: 'integer', minimum: 0 },
          },
        },
      },
    },
  },
} as const;

/** `GET /v1/usage`. */
export function usageOperationWith(errors: Record<string, unknown>): Record<string, unknown> {
  return {
    operationId: 'getUsage',
    summary: "The calling key's spend per hour and per day, and its limit and balance (extension)",
    description:
      'Requests charged to the key and the units they were priced at (the units a dry run or ' +
      "GraphQL's extensions.cost.units report), from every instance on the database, counted " +
      'within a few seconds; dry runs and requests refused before the key was charged are not ' +
      'counted. It takes no parameters and costs one unit.',
    responses: {
      '200': {
        description: "The key's usage.",
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Usage' } } },
      },
      ...errors,
    },
  };
}
