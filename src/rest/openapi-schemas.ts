import { AGGREGATIONS, FILLS, INTERVALS, MAX_WINDOW, TRANSFORMS } from '../series/series-options.js';
import { COST_SCHEMAS, DRY_RUN_PARAMETER } from './openapi-cost.js';

/** The reusable schemas and parameters of the OpenAPI document. */
export const OPENAPI_COMPONENTS = {
  securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' } },
  parameters: {
    StartDate: {
      name: 'start_date',
      in: 'query',
      required: false,
      description: 'First day, inclusive; omitted means the earliest stored day.',
      schema: { $ref: '#/components/schemas/Date' },
    },
    EndDate: {
      name: 'end_date',
      in: 'query',
      required: false,
      description: 'Last day, inclusive; omitted means the latest stored day.',
      schema: { $ref: '#/components/schemas/Date' },
    },
    Interval: {
      name: 'interval',
      in: 'query',
      required: false,
      description:
        'Extension. Calendar buckets (UTC days): `day` (the stored series, the ' +
        'default), `week` (ISO, from Monday), `month`, `quarter`, `year`. A bucket ' +
        'is labelled by its first day, even when the range starts inside it; only ' +
        'days inside the range are aggregated.',
      schema: { enum: [...INTERVALS] },
    },
    Aggregation: {
      name: 'aggregation',
      in: 'query',
      required: false,
      description:
        "Extension. How a bucket's days become one value; omitted means the metric's " +
        'default (`GET /v1/metrics`). Integer metrics stay whole under sum, min, ' +
        'max, first and last; avg gives decimals.',
      schema: { enum: [...AGGREGATIONS] },
    },
    Fill: {
      name: 'fill',
      in: 'query',
      required: false,
      description:
        "Extension. A bucket without data, between the series' first and last " +
        'stored day: `none` leaves it out (the default), `null` gives it a null ' +
        'value, `zero` a 0, `previous` the last known value.',
      schema: { enum: [...FILLS] },
    },
    Transform: {
      name: 'transform',
      in: 'query',
      required: false,
      description:
        'Extension, applied after buckets and fill. `moving_average`: the mean ' +
        'of the last `window` calendar buckets, warmed up from data before the ' +
        'range; `change` and `percent_change` (in percent, against the absolute ' +
        'previous value): against the calendar-previous bucket, null when it is ' +
        "missing or (for a percentage) zero; `cumulative_sum`: from the range's " +
        'first bucket. A bucket without a value keeps none.',
      schema: { enum: [...TRANSFORMS] },
    },
    Window: {
      name: 'window',
      in: 'query',
      required: false,
      description:
        `Extension, with transform=moving_average only: the buckets it spans, ` + `this one included (default 7).`,
      schema: { type: 'integer', minimum: 1, maximum: MAX_WINDOW },
    },
    AsOf: {
      name: 'as_of',
      in: 'query',
      required: false,
      description:
        'Extension: answer with the values as they were served at this instant ' +
        '(RFC 3339, or YYYY-MM-DD meaning the end of that UTC day). A point first ' +
        'written later is absent; a value revised later shows its earlier value.',
      schema: { type: 'string', examples: ['2026-03-01', '2026-03-01T12:00:00Z'] },
    },
    DryRun: DRY_RUN_PARAMETER,
    Vintage: {
      name: 'vintage',
      in: 'query',
      required: false,
      description:
        "Extension: which of each day's values to read from its revision history. latest (the default): " +
        'the one served now (or at as_of); first_release: the first ever written for the day; known_after: ' +
        'the one standing at the end of UTC day D + lag_days, absent when none had been written by then. ' +
        'With as_of, nothing written later counts. Buckets, fill and transforms apply to the values chosen. ' +
        'Priced as the same request without it plus one unit per 3,650 history rows in the range.',
      schema: { enum: ['latest', 'first_release', 'known_after'], default: 'latest' },
    },
    LagDays: {
      name: 'lag_days',
      in: 'query',
      required: false,
      description: 'Extension: days after each day for vintage=known_after; required with it, refused without it.',
      schema: { type: 'integer', minimum: 0, maximum: 3650 },
    },
    LimitPerProject: {
      name: 'limit_per_project',
      in: 'query',
      required: false,
      description:
        'Extension: only the newest this many points (buckets) of each series within the range, still ' +
        'ascending; `limit_per_project=1` is the latest value. Priced by what is read: a daily series reads ' +
        'only those days.',
      schema: { type: 'integer', minimum: 1, maximum: 10000 },
    },
  },
  schemas: {
    ...COST_SCHEMAS,
    Date: { type: 'string', format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
    DataPoint: {
      type: 'object',
      required: ['date', 'value'],
      description:
        'A stored day, or with interval a bucket labelled by its first day. The ' +
        'value is null only for fill=null and for a transform that cannot be known ' +
        '(at a gap, a percentage from a zero bucket).',
      properties: { date: { $ref: '#/components/schemas/Date' }, value: { type: ['number', 'null'] } },
      additionalProperties: false,
    },
    IntegerDataPoint: {
      type: 'object',
      required: ['date', 'value'],
      description:
        'A point of an integer metric: a JSON integer, except with aggregation=avg, ' +
        'moving_average or percent_change (decimals) and fill=null or a transform ' +
        'that cannot be known (null). Typed as a number, so the decimals validate ' +
        'too.',
      properties: { date: { $ref: '#/components/schemas/Date' }, value: { type: ['number', 'null'] } },
      additionalProperties: false,
    },
    ExtendedIntegerDataPoint: {
      type: 'object',
      required: ['date', 'value'],
      description:
        'An integer point with named extra fields (aggregated like the value; ' +
        'absent on filled buckets and with a transform). A JSON integer under the ' +
        'same conditions as IntegerDataPoint, typed as a number for the same reason.',
      properties: { date: { $ref: '#/components/schemas/Date' }, value: { type: ['number', 'null'] } },
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
          items: {
            type: 'object',
            required: ['param', 'message'],
            properties: { param: { type: 'string' }, message: { type: 'string' } },
          },
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
            required: [
              'name',
              'path',
              'valueKind',
              'projectRequired',
              'defaultAggregation',
              'unit',
              'methodology',
              'tags',
              'expectedBy',
              'stabilizationDays',
              'projects',
            ],
            properties: {
              name: { type: 'string' },
              path: { type: 'string' },
              valueKind: { enum: ['integer', 'decimal'] },
              projectRequired: { type: 'boolean' },
              defaultAggregation: { enum: [...AGGREGATIONS] },
              formula: {
                type: 'string',
                description:
                  'Derived metrics only (listed after the stored ones): the expression computing it from ' +
                  "its inputs, e.g. `100 * p / (p + b)`. Its projects' dates are the days all inputs span.",
              },
              inputs: {
                type: 'array',
                description: 'Derived metrics only: the stored metrics its formula reads.',
                items: {
                  type: 'object',
                  required: ['name', 'metric', 'aggregation'],
                  properties: {
                    name: { type: 'string' },
                    metric: { type: 'string' },
                    aggregation: { enum: [...AGGREGATIONS, null] },
                  },
                },
              },
              unit: { type: 'string', description: 'USD, BTC, count, percent, ratio, native token.' },
              methodology: { type: 'string', description: 'What is counted, and when a day closes.' },
              tags: { type: 'array', items: { type: 'string' } },
              expectedBy: {
                type: 'string',
                pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$',
                description: "The UTC time on day D + 1 by which day D's value normally lands.",
              },
              stabilizationDays: {
                type: 'integer',
                minimum: 0,
                description: "Days after a day's first write during which its value is provisional.",
              },
              projects: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['slug', 'firstDate', 'lastDate', 'updatedAt', 'stale'],
                  properties: {
                    slug: { type: 'string' },
                    firstDate: { type: ['string', 'null'] },
                    lastDate: { type: ['string', 'null'] },
                    updatedAt: {
                      type: ['string', 'null'],
                      format: 'date-time',
                      description:
                        'When any point of the series was last written, UTC with microseconds (as the changes feed).',
                    },
                    stale: {
                      type: 'boolean',
                      description:
                        'True when lastDate is older than the last day that should have landed by now ' +
                        '(day D by D + 1 at expectedBy UTC), or the series has no data.',
                    },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
} as const;
