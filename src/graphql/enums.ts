import { toGraphqlName, type Catalog } from '../catalog/load-catalog.js';
import { AGGREGATIONS, FILLS, INTERVALS, TRANSFORMS } from '../series/series-options.js';
import { VINTAGES } from '../series/vintage.js';
import type { Builder } from './builder.js';

/** The catalog as enums: metric names and project slugs (`-` becomes `_`, case kept). */
export function addEnums(builder: Builder, catalog: Catalog) {
  return {
    /** Each catalog metric; the internal value is the metric's REST name. */
    MetricName: builder.enumType('MetricName', {
      description:
        'A metric of the catalog. The GraphQL name replaces `-` with `_`; the description gives the REST name.',
      values: Object.fromEntries(
        [...catalog.metrics, ...catalog.derived].map((m) => [
          toGraphqlName(m.name),
          { value: m.name, description: `REST name: ${m.name}${m.formula === undefined ? '' : ' (derived)'}` },
        ]),
      ),
    }),
    /** Every slug of the catalog; the internal value is the slug. */
    Project: builder.enumType('Project', {
      description:
        'A project slug (chain, fund issuer, listed company, trading venue or ' +
        'launchpad). The GraphQL name replaces `-` with `_` and keeps the case; ' +
        'the description gives the original slug. Which projects a metric accepts ' +
        'is listed by `metrics`.',
      values: Object.fromEntries(
        catalog.allProjects.map((slug) => [toGraphqlName(slug), { value: slug, description: `slug: ${slug}` }]),
      ),
    }),
    Interval: builder.enumType('Interval', {
      description:
        'Calendar buckets (UTC days): DAY is the stored daily series; WEEK is ' +
        'an ISO week from Monday; MONTH, QUARTER and YEAR start on their first ' +
        'day. A bucket is labelled by its first day.',
      values: namesOf(INTERVALS),
    }),
    Aggregation: builder.enumType('Aggregation', {
      description:
        'How the days of a bucket become one value. Each metric has a default (MetricInfo.defaultAggregation).',
      values: namesOf(AGGREGATIONS),
    }),
    Fill: builder.enumType('Fill', {
      description:
        "What a bucket without data becomes, between the series' first and last " +
        'stored day: NONE leaves it out, NULL gives it a null value, ZERO a 0, ' +
        'PREVIOUS the last known value. A filled bucket has count 0.',
      values: namesOf(FILLS),
    }),
    Transform: builder.enumType('Transform', {
      description:
        'A transform of the bucketed, filled series. MOVING_AVERAGE: the mean ' +
        'of the last `window` calendar buckets (default 7), warmed up from data ' +
        'before `from`. CHANGE, PERCENT_CHANGE: against the calendar-previous bucket; ' +
        'null when it is missing (and, for a percentage, zero). CUMULATIVE_SUM: ' +
        "from the range's first bucket. A bucket without a value keeps none.",
      values: namesOf(TRANSFORMS),
    }),
    Vintage: builder.enumType('Vintage', {
      description:
        "Which of each day's values a read takes from its revision history: LATEST the one " +
        'served now (or at `asOf`); FIRST_RELEASE the first ever written for the day; ' +
        'KNOWN_AFTER the one that stood at the end of UTC day D + `lagDays`, absent when ' +
        'none had been written by then. With `asOf`, nothing written later counts.',
      values: namesOf(VINTAGES),
    }),
    ValueKind: builder.enumType('ValueKind', {
      description: "Whether a metric's values are whole numbers or decimals.",
      values: {
        INTEGER: { value: 'integer', description: 'Whole numbers (counts).' },
        DECIMAL: { value: 'decimal', description: 'Decimal numbers (prices, USD totals, ratios, percentages).' },
      } as const,
    }),
  };
}

export type Enums = ReturnType<typeof addEnums>;

// Private

/** `moving_average` → `MOVING_AVERAGE`, the internal value being the name REST uses. */
function namesOf(names: readonly string[]): Record<string, { value: string }> {
  return Object.fromEntries(names.map((name) => [name.toUpperCase(), { value: name }]));
}
