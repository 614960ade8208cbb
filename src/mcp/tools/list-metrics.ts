import { z } from 'zod';
import type { Catalog } from '../../catalog/load-catalog.js';
import { GROUP_SCHEMA, METRIC_ENTRY_SCHEMA, readGroups, readMetricEntries } from '../catalog-entries.js';
import { refuseUnknown } from '../argument-checks.js';
import type { Tool } from '../tool.js';

/**
 * `list_metrics`: the catalog as `GET /v1/metrics` lists it (stored metrics, then derived ones
 * with their formula and inputs), with each metric's description, and the groups of `GET /v1/groups`.
 */
export function createListMetricsTool(catalog: Catalog): Tool {
  return {
    name: 'list_metrics',
    title: 'List the metrics',
    description:
      'Every metric: its name, what a value is, its unit and methodology, integer or decimal, default ' +
      'aggregation, whether a project is required, and its projects with the days stored (firstDate, lastDate) ' +
      'and last write; derived metrics last, each with its formula and inputs. Then the named groups of ' +
      'projects that total and rank take as group.',
    input: z.object({}),
    output: z.object({ metrics: z.array(METRIC_ENTRY_SCHEMA), groups: z.array(GROUP_SCHEMA) }),
    cost: (args) => {
      refuseUnknown(args, []);
      return 1;
    },
    run: async (args, context) => {
      refuseUnknown(args, []);
      const [metrics, groups] = await Promise.all([readMetricEntries(context, catalog.served), readGroups(context)]);
      return { structured: { metrics, groups } };
    },
  };
}
