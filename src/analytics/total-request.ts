import { z } from 'zod';
import { issuesError, type RequestIssue } from '../api/api-error.js';
import type { Catalog } from '../catalog/load-catalog.js';
import { clipped } from '../clipped.js';
import {
  SERIES_REQUEST_SCHEMA,
  type SeriesRequest,
  type SeriesRequestField,
  type SeriesRequestInput,
} from '../series/series-request.js';
import { memberProjects } from './members.js';

/** How a total combines its members' values in a bucket. */
export const TOTAL_OPS = ['sum', 'avg', 'min', 'max', 'count', 'median'] as const;
export type TotalOp = (typeof TOTAL_OPS)[number];

/** A total request as an adapter read it: a series request over a group or projects, and how to combine them. */
export interface TotalRequestInput extends SeriesRequestInput {
  group?: string | undefined;
  op?: string | undefined;
  /** REST sends `true` or `false` as text. */
  requireComplete?: string | boolean | undefined;
}

/** A validated total: its members' series request (slugs are the members) and how they combine. */
export interface TotalRequest {
  series: SeriesRequest;
  op: TotalOp;
  /** Incomplete buckets (an expected member without a value) have a null value. */
  requireComplete: boolean;
}

export type TotalRequestField = SeriesRequestField | 'group' | 'op' | 'requireComplete';

/**
 * Validates a total request: the group or projects (src/analytics/members.ts), `op` and
 * `requireComplete`, and the rest by the shared series schema. Every problem is one 400
 * ApiError naming each parameter in the caller's words (`names`).
 */
export function validateTotalRequest(
  catalog: Catalog,
  input: TotalRequestInput,
  names: Readonly<Record<TotalRequestField, string>>,
): TotalRequest {
  const issues: RequestIssue[] = [];
  const projects = memberProjects(catalog, input.metric, input.group, input.projects, issues);
  const own = OWN_FIELDS.safeParse({ op: input.op, requireComplete: input.requireComplete });
  if (!own.success) issues.push(...own.error.issues);
  const series = SERIES_REQUEST_SCHEMA.safeParse({ ...input, projects });
  if (!series.success) issues.push(...series.error.issues);
  if (!own.success || !series.success || issues.length > 0) throw issuesError(issues, names);
  return { series: series.data, op: own.data.op ?? 'sum', requireComplete: own.data.requireComplete ?? false };
}

// Private

const OWN_FIELDS = z.object({
  op: z
    .string()
    .refine((v): v is TotalOp => (TOTAL_OPS as readonly string[]).includes(v), {
      error: (issue) => `expected one of ${TOTAL_OPS.join(', ')}, got ${JSON.stringify(clipped(String(issue.input)))}`,
    })
    .optional(),
  requireComplete: z
    .union([z.boolean(), z.string()])
    .transform((v, ctx) => {
      if (typeof v === 'boolean') return v;
      if (v === 'true' || v === 'false') return v === 'true';
      ctx.addIssue({ code: 'custom', message: `expected true or false, got ${JSON.stringify(clipped(v))}` });
      return z.NEVER;
    })
    .optional(),
});
