import { z } from 'zod';
import type { Catalog } from '../../catalog/load-catalog.js';
import { toGraphqlName } from '../../catalog/load-catalog.js';
import { metricOf, refuseUnknown } from '../argument-checks.js';
import { METRIC_ENTRY_SCHEMA, readMetricEntries } from '../catalog-entries.js';
import type { Tool } from '../tool.js';

/** `explain_metric`: one metric's entry (what a value is, how it aggregates, coverage) and how to ask for it. */
export function createExplainMetricTool(catalog: Catalog): Tool {
  const names = catalog.metrics.map((m) => m.name) as [string, ...string[]];
  return {
    name: 'explain_metric',
    title: 'Explain a metric',
    description:
      'What one metric measures: what a value is and why it aggregates as it does by default, integer or ' +
      'decimal, extra fields, each project with its stored days and last write, and its REST path and GraphQL name.',
    input: z.object({ metric: z.enum(names).describe('The metric, as REST names it.') }),
    output: METRIC_ENTRY_SCHEMA.extend({
      graphqlName: z.string().describe('The metric as a GraphQL MetricName enum value.'),
    }),
    cost: (args) => {
      refuseUnknown(args, ['metric']);
      metricOf(args, catalog.byName);
      return 1;
    },
    run: async (args, context) => {
      refuseUnknown(args, ['metric']);
      const metric = metricOf(args, catalog.byName);
      const entry = (await readMetricEntries(context, catalog.byName)).find((e) => e.name === metric.name);
      return { structured: { ...entry, graphqlName: toGraphqlName(metric.name) } };
    },
  };
}
