import { CATALOG, toGraphqlName } from '../catalog/load-catalog.js';
import { builder } from './builder.js';

/** Each catalog metric as an enum value (`token-price-usd` → `token_price_usd`); the internal value is the metric name. */
export const MetricNameEnum = builder.enumType('MetricName', {
  description: 'A metric of the catalog. The GraphQL name replaces `-` with `_`; the description gives the REST name.',
  values: Object.fromEntries(
    CATALOG.metrics.map((m) => [toGraphqlName(m.name), { value: m.name, description: `REST name: ${m.name}` }]),
  ),
});

/** Every slug of the catalog as an enum value (`other-launchpads` → `other_launchpads`, case kept); the internal value is the slug. */
export const ProjectEnum = builder.enumType('Project', {
  description:
    'A project slug (chain, fund issuer, listed company, trading venue or launchpad). The GraphQL name replaces `-` with `_` and keeps the case; the description gives the original slug. Which projects a metric accepts is listed by `metrics`.',
  values: Object.fromEntries(
    CATALOG.allProjects.map((slug) => [toGraphqlName(slug), { value: slug, description: `slug: ${slug}` }]),
  ),
});

export const ValueKindEnum = builder.enumType('ValueKind', {
  description: 'Whether a metric\'s values are whole numbers or decimals.',
  values: {
    INTEGER: { value: 'integer', description: 'Whole numbers (counts).' },
    DECIMAL: { value: 'decimal', description: 'Decimal numbers (prices, USD totals, ratios, percentages).' },
  } as const,
});
