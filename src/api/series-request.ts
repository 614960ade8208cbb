import { z } from 'zod';
import type { Catalog, MetricDefinition } from '../catalog/load-catalog.js';
import { isIsoDate } from '../dates.js';

/**
 * The one validation of a series request, shared by REST and GraphQL. Field names are
 * neutral; each adapter maps them to its own parameter names (`project`/`projects`,
 * `start_date`/`from`, `end_date`/`to`).
 */
export interface SeriesRequestInput {
  metric: string;
  /** Undefined when the caller named no project; segments are kept as sent (`''` for `a,,b`). */
  projects?: readonly string[] | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

/** A request every later step can trust: known metric, allowed distinct slugs, ordered bounds. */
export interface SeriesRequest {
  metric: MetricDefinition;
  /** Distinct slugs in the order first requested. */
  slugs: readonly string[];
  /** Inclusive bounds; null means from the first or up to the last stored day. */
  from: string | null;
  to: string | null;
}

export type SeriesRequestField = 'metric' | 'projects' | 'from' | 'to';

/** `YYYY-MM-DD` naming a real calendar day. */
export const isoDateSchema = z.string().refine(isIsoDate, {
  error: (issue) => `expected a real calendar date as YYYY-MM-DD, got ${JSON.stringify(issue.input)}`,
});

/** Builds the request schema for a catalog; its output is a {@link SeriesRequest}. */
export function createSeriesRequestSchema(catalog: Catalog) {
  return z
    .object({
      metric: z.string(),
      projects: z.array(z.string()).optional(),
      from: isoDateSchema.optional(),
      to: isoDateSchema.optional(),
    })
    .transform((input, ctx): SeriesRequest => {
      const metric = catalog.byName.get(input.metric);
      if (metric === undefined) {
        ctx.addIssue({ code: 'custom', path: ['metric'], message: `unknown metric ${JSON.stringify(input.metric)}` });
        return z.NEVER;
      }
      const slugs = resolveSlugs(metric, input.projects, ctx);
      if (input.from !== undefined && input.to !== undefined && input.from > input.to) {
        ctx.addIssue({ code: 'custom', path: ['from'], message: `start date ${input.from} is after end date ${input.to}` });
      }
      return { metric, slugs, from: input.from ?? null, to: input.to ?? null };
    });
}

// Private

/** Offending projects named one by one in an error; any more are only counted. */
const MAX_NAMED_PROJECTS = 5;

function resolveSlugs(metric: MetricDefinition, projects: readonly string[] | undefined, ctx: z.RefinementCtx): string[] {
  const allowed = `allowed: ${metric.projects.join(', ')}`;
  if (projects === undefined) {
    if (metric.projectRequired) {
      ctx.addIssue({ code: 'custom', path: ['projects'], message: `a project is required for ${metric.name}; ${allowed}` });
    }
    return [...metric.projects];
  }
  if (projects.length === 0) {
    ctx.addIssue({ code: 'custom', path: ['projects'], message: `name at least one project; ${allowed}` });
  }
  // Each distinct offending value once, the first few by name: a 1 MB list of bad slugs
  // must not become an answer of megabytes that repeats the allowed list per item.
  const distinct = [...new Set(projects)];
  const offending = distinct.filter((slug) => slug === '' || !metric.projects.includes(slug));
  for (const slug of offending.slice(0, MAX_NAMED_PROJECTS)) {
    if (slug === '') {
      ctx.addIssue({ code: 'custom', path: ['projects'], message: `empty project name in the list; ${allowed}` });
    } else {
      const sameLetters = metric.projects.find((p) => p.toLowerCase() === slug.toLowerCase());
      const hint = sameLetters === undefined ? '' : ` (slugs are case-sensitive: did you mean ${JSON.stringify(sameLetters)}?)`;
      ctx.addIssue({
        code: 'custom',
        path: ['projects'],
        message: `${JSON.stringify(truncate(slug))} is not a project of ${metric.name}${hint}; ${allowed}`,
      });
    }
  }
  if (offending.length > MAX_NAMED_PROJECTS) {
    ctx.addIssue({ code: 'custom', path: ['projects'], message: `and ${offending.length - MAX_NAMED_PROJECTS} more that are not projects of ${metric.name}` });
  }
  return distinct;
}

/** Keeps hostile inputs from bloating error bodies. */
function truncate(text: string): string {
  return text.length > 64 ? `${text.slice(0, 64)}…` : text;
}
