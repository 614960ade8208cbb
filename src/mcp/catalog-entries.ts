import { z } from 'zod';
import type { MetricDefinition } from '../catalog/load-catalog.js';
import { failedRest } from './rest-failure.js';
import type { ToolContext } from './tool.js';

/**
 * Fields of a catalog metric that describe it beyond the REST catalog's (unit, methodology,
 * revision profile): passed on where the catalog has them, so a field the catalog gains is
 * listed by adding its name here.
 */
export const PROFILE_FIELDS = ['description', 'extraFields', 'unit', 'methodology', 'revisionProfile'] as const;

/** A project of the REST catalog: its slug and stored coverage. */
const PROJECT_SCHEMA = z.looseObject({
  slug: z.string(),
  firstDate: z.string().nullable(),
  lastDate: z.string().nullable(),
  updatedAt: z.string().nullable(),
});

/** A metric as the tools describe it: the REST catalog's entry and the catalog's profile fields. */
export const METRIC_ENTRY_SCHEMA = z.looseObject({
  name: z.string(),
  path: z.string(),
  valueKind: z.enum(['integer', 'decimal']),
  projectRequired: z.boolean(),
  defaultAggregation: z.string(),
  description: z.string().describe('What a value is, and so how it aggregates.'),
  projects: z.array(PROJECT_SCHEMA),
});

export type MetricEntry = z.infer<typeof METRIC_ENTRY_SCHEMA>;

/** Every metric of `GET /v1/metrics` (run in-process with the caller's key), with its profile fields added. */
export async function readMetricEntries(
  context: ToolContext,
  byName: ReadonlyMap<string, MetricDefinition>,
): Promise<MetricEntry[]> {
  const answer = await context.rest('/v1/metrics');
  if (answer.status !== 200) throw failedRest(answer);
  const { metrics } = JSON.parse(answer.body.toString('utf8')) as { metrics: MetricEntry[] };
  return metrics.map((entry) => {
    const metric = byName.get(entry.name);
    return { ...(metric === undefined ? {} : profileOf(metric)), ...entry } as MetricEntry;
  });
}

// Private

function profileOf(metric: MetricDefinition): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(metric).filter(
      ([name, value]) =>
        (PROFILE_FIELDS as readonly string[]).includes(name) &&
        value !== undefined &&
        !(Array.isArray(value) && value.length === 0),
    ),
  );
}
