import { z } from 'zod';
import { issuesError } from '../api/api-error.js';
import type { MetricDefinition } from '../catalog/load-catalog.js';
import { clipped } from '../clipped.js';
import { isIsoDate, toEpochDay } from '../dates.js';

/** The most days one triangle spans: ten years and ten days. */
export const MAX_TRIANGLE_DAYS = 3660;
/** The most lags (columns) one triangle has. */
export const MAX_LAGS = 16;
/** The largest lag, in days. */
export const MAX_LAG = 3650;

/** A triangle request as an adapter read it; REST sends `lags` as comma-separated text. */
export interface TriangleRequestInput {
  metric: MetricDefinition;
  project?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
  lags?: string | readonly number[] | undefined;
}

/** A checked triangle request: one project of the metric, a bounded range, increasing lags. */
export interface TriangleRequest {
  metric: MetricDefinition;
  slug: string;
  from: string;
  to: string;
  lags: readonly number[];
}

/** The fields a caller can get wrong; each adapter names them in its own vocabulary. */
export type TriangleRequestField = 'project' | 'from' | 'to' | 'lags';

const dateSchema = z.string({ error: 'required: a date as YYYY-MM-DD' }).refine(isIsoDate, {
  error: (issue) => `expected a real calendar date as YYYY-MM-DD, got ${JSON.stringify(clipped(String(issue.input)))}`,
});

const lagsSchema = z
  .union([z.string(), z.array(z.number())], { error: `required: lags in days, e.g. 0,1,7,30` })
  .transform((raw, ctx) => {
    const parts = typeof raw === 'string' ? raw.split(',') : raw.map(String);
    if (parts.length === 0 || (parts.length === 1 && parts[0] === '')) {
      ctx.addIssue({ code: 'custom', message: 'name at least one lag in days, e.g. 0,1,7,30' });
      return z.NEVER;
    }
    if (parts.length > MAX_LAGS) {
      ctx.addIssue({ code: 'custom', message: `at most ${MAX_LAGS} lags, got ${parts.length}` });
      return z.NEVER;
    }
    const lags = parts.map((p) => (/^\d{1,5}$/.test(p) ? Number(p) : Number.NaN));
    const bad = parts.find((_, i) => !(lags[i]! <= MAX_LAG));
    if (bad !== undefined) {
      ctx.addIssue({
        code: 'custom',
        message: `expected whole numbers of days from 0 to ${MAX_LAG}, got ${JSON.stringify(clipped(bad))}`,
      });
      return z.NEVER;
    }
    const at = lags.findIndex((lag, i) => i > 0 && lag <= lags[i - 1]!);
    if (at > 0) {
      const message =
        lags[at] === lags[at - 1]
          ? `lag ${lags[at]} is given twice`
          : `lags must be strictly increasing: ${lags[at]} comes after ${lags[at - 1]}`;
      ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    }
    return lags;
  });

/** The one validation of a triangle request, shared by REST and GraphQL; each issue's path names its field. */
export const TRIANGLE_REQUEST_SCHEMA = z
  .object({
    metric: z.custom<MetricDefinition>(),
    project: z.string({ error: 'required: one project slug' }),
    from: dateSchema,
    to: dateSchema,
    lags: lagsSchema,
  })
  .transform((input, ctx): TriangleRequest => {
    if (!input.metric.projects.includes(input.project)) {
      ctx.addIssue({
        code: 'custom',
        path: ['project'],
        message:
          `${JSON.stringify(clipped(input.project))} is not a project of ${input.metric.name}; ` +
          `name one of: ${input.metric.projects.join(', ')}`,
      });
    }
    const days = toEpochDay(input.to) - toEpochDay(input.from) + 1;
    if (days < 1) {
      ctx.addIssue({
        code: 'custom',
        path: ['from'],
        message: `start date ${input.from} is after end date ${input.to}`,
      });
    } else if (days > MAX_TRIANGLE_DAYS) {
      ctx.addIssue({
        code: 'custom',
        path: ['to'],
        message: `a triangle spans at most ${MAX_TRIANGLE_DAYS} days; ${input.from} to ${input.to} is ${days}`,
      });
    }
    return { metric: input.metric, slug: input.project, from: input.from, to: input.to, lags: input.lags };
  });

/** Validates a triangle request, or one 400 ApiError naming each parameter as `names` calls it. */
export function validateTriangleRequest(
  input: TriangleRequestInput,
  names?: Readonly<Record<TriangleRequestField, string>>,
): TriangleRequest {
  const result = TRIANGLE_REQUEST_SCHEMA.safeParse(input);
  if (result.success) return result.data;
  throw issuesError(result.error.issues, names);
}

/** Days from `from` to `to`, both counted. */
export function triangleDays(request: Pick<TriangleRequest, 'from' | 'to'>): number {
  return toEpochDay(request.to) - toEpochDay(request.from) + 1;
}
