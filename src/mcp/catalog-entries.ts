import { z } from 'zod';
import type { MetricDefinition } from '../catalog/load-catalog.js';
import { failedRest } from './rest-failure.js';
import type { ToolContext } from './tool.js';

/**
 * Fields of a catalog metric that describe it beyond the REST catalog's entry (which has its
 * unit, methodology, tags, schedule, and a derived metric's formula and inputs): passed on
 * where the catalog has them, so a field the catalog gains is listed by adding its name here.
 */
export const PROFILE_FIELDS = ['description', 'extraFields'] as const;

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
  unit: z.string().describe('What a value is measured in.'),
  methodology: z.string().describe('What is counted and when a day closes.'),
  tags: z.array(z.string()),
  expectedBy: z.string().describe("The UTC time (HH:MM) on day D + 1 by which day D's value normally lands."),
  stabilizationDays: z.int().describe("Days after a day's first write during which its value may still be revised."),
  formula: z.string().nullable().optional().describe('A derived metric: its expression over its inputs.'),
  inputs: z
    .array(z.looseObject({ name: z.string(), metric: z.string(), aggregation: z.string().nullable() }))
    .optional()
    .describe("A derived metric: each input's name in the formula, its stored metric and aggregation."),
  projects: z.array(PROJECT_SCHEMA),
});

/** A named group of projects, as `GET /v1/groups` lists it (`group` of total and rank takes its name). */
export const GROUP_SCHEMA = z.looseObject({
  name: z.string(),
  description: z.string(),
  projects: z.array(z.string()),
});

export type MetricEntry = z.infer<typeof METRIC_ENTRY_SCHEMA>;

/**
 * Every metric of `GET /v1/metrics` (run in-process with the caller's key), stored and
 * derived, with its profile fields added; `byName` holds both kinds (the catalog's `served`).
 */
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

/** The catalog's groups, as `GET /v1/groups` answers them in-process. */
export async function readGroups(context: ToolContext): Promise<z.infer<typeof GROUP_SCHEMA>[]> {
  const answer = await context.rest('/v1/groups');
  if (answer.status !== 200) throw failedRest(answer);
  return (JSON.parse(answer.body.toString('utf8')) as { groups: z.infer<typeof GROUP_SCHEMA>[] }).groups;
}

/**
 * A metric's revision profile, as `GET /v1/metrics/<name>/profile` answers it in-process
 * (default lookback); undefined when REST does not answer one (a derived metric, a store
 * failing, a key out of units), as the rest of an explanation stands without it.
 */
export async function readRevisionProfile(context: ToolContext, name: string): Promise<unknown> {
  try {
    const answer = await context.rest(`/v1/metrics/${encodeURIComponent(name)}/profile`);
    if (answer.status !== 200) return undefined;
    return (JSON.parse(answer.body.toString('utf8')) as { revisionProfile?: unknown }).revisionProfile ?? undefined;
  } catch {
    return undefined;
  }
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
