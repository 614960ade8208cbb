import { z } from 'zod';
import type { Catalog } from '../../catalog/load-catalog.js';
import { METRIC_ENTRY_SCHEMA, readMetricEntries } from '../catalog-entries.js';
import { refuseUnknown } from '../argument-checks.js';
import type { Tool } from '../tool.js';

/** `list_metrics`: the catalog as `GET /v1/metrics` lists it, with each metric's description. */
export function createListMetricsTool(catalog: Catalog): Tool {
  return {
    name: 'list_metrics',
    title: 'List the metrics',
    description:
      'Every metric: its name, what a value is, integer or decimal, default aggregation, whether a project ' +
      'is required, and its projects with the days stored (firstDate, lastDate) and last write.',
    input: z.object({}),
    output: z.object({ metrics: z.array(METRIC_ENTRY_SCHEMA) }),
    cost: (args) => {
      refuseUnknown(args, []);
      return 1;
    },
    run: async (args, context) => {
      refuseUnknown(args, []);
      return { structured: { metrics: await readMetricEntries(context, catalog.byName) } };
    },
  };
}
