import { toGraphqlName, type Catalog } from '../catalog/load-catalog.js';
import type { Builder } from './builder.js';

/** The catalog as enums: metric names and project slugs (`-` becomes `_`, case kept). */
export function addEnums(builder: Builder, catalog: Catalog) {
  return {
    /** Each catalog metric; the internal value is the metric's REST name. */
    MetricName: builder.enumType('MetricName', {
      description: 'A metric of the catalog. The GraphQL name replaces `-` with `_`; the description gives the REST name.',
      values: Object.fromEntries(catalog.metrics.map((m) => [toGraphqlName(m.name), { value: m.name, description: `REST name: ${m.name}` }])),
    }),
    /** Every slug of the catalog; the internal value is the slug. */
    Project: builder.enumType('Project', {
      description:
        'A project slug (chain, fund issuer, listed company, trading venue or launchpad). The GraphQL name replaces `-` with `_` and keeps the case; the description gives the original slug. Which projects a metric accepts is listed by `metrics`.',
      values: Object.fromEntries(catalog.allProjects.map((slug) => [toGraphqlName(slug), { value: slug, description: `slug: ${slug}` }])),
    }),
    ValueKind: builder.enumType('ValueKind', {
      description: 'Whether a metric\'s values are whole numbers or decimals.',
      values: {
        INTEGER: { value: 'integer', description: 'Whole numbers (counts).' },
        DECIMAL: { value: 'decimal', description: 'Decimal numbers (prices, USD totals, ratios, percentages).' },
      } as const,
    }),
  };
}

export type Enums = ReturnType<typeof addEnums>;
