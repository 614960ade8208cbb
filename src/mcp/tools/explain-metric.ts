import { z } from 'zod';
import type { Catalog } from '../../catalog/load-catalog.js';
import { toGraphqlName } from '../../catalog/load-catalog.js';
import { priceProfile } from '../../limits/history-cost.js';
import { DEFAULT_LOOKBACK_DAYS } from '../../revisions/revision-profiles.js';
import { metricOf, refuseUnknown } from '../argument-checks.js';
import { METRIC_ENTRY_SCHEMA, readMetricEntries, readRevisionProfile } from '../catalog-entries.js';
import type { Tool } from '../tool.js';

/**
 * `explain_metric`: one metric's entry (what a value is, its unit, methodology, schedule, how
 * it aggregates, coverage), its revision profile, and how to ask for it.
 */
export function createExplainMetricTool(catalog: Catalog): Tool {
  const names = [...catalog.served.keys()] as [string, ...string[]];
  return {
    name: 'explain_metric',
    title: 'Explain a metric',
    description:
      'What one metric measures: what a value is and why it aggregates as it does by default, its unit, ' +
      'methodology and tags, when a day lands (expectedBy) and for how many days it may be revised ' +
      "(stabilizationDays), integer or decimal, extra fields, a derived one's formula and inputs, each project " +
      'with its stored days and last write, how its values were revised (revisionProfile, from ' +
      'GET /v1/metrics/<name>/profile), and its REST path and GraphQL name.',
    input: z.object({ metric: z.enum(names).describe('The metric, as REST names it.') }),
    output: METRIC_ENTRY_SCHEMA.extend({
      graphqlName: z.string().describe('The metric as a GraphQL MetricName enum value.'),
      revisionProfile: z
        .unknown()
        .optional()
        .describe('How values were revised over the last 180 days of data; absent where REST has none.'),
    }),
    cost: (args, { services }) => {
      refuseUnknown(args, ['metric']);
      const metric = metricOf(args, catalog.served);
      // GET /v1/metrics, and the profile's request where REST has one (a stored metric).
      if (!catalog.byName.has(metric.name)) return 1;
      const kept = services.revisionProfiles.isKept(metric.name, DEFAULT_LOOKBACK_DAYS);
      return 1 + priceProfile(metric.projects.length, DEFAULT_LOOKBACK_DAYS, kept);
    },
    run: async (args, context) => {
      refuseUnknown(args, ['metric']);
      const metric = metricOf(args, catalog.served);
      const [entries, revisionProfile] = await Promise.all([
        readMetricEntries(context, catalog.served),
        readRevisionProfile(context, metric.name),
      ]);
      const entry = entries.find((e) => e.name === metric.name);
      const profile = revisionProfile === undefined ? {} : { revisionProfile };
      return { structured: { ...entry, graphqlName: toGraphqlName(metric.name), ...profile } };
    },
  };
}
