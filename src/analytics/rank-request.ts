import { z } from 'zod';
import { issuesError, type RequestIssue } from '../api/api-error.js';
import type { Catalog } from '../catalog/load-catalog.js';
import { clipped } from '../clipped.js';
import { fromEpochDay, toEpochDay } from '../dates.js';
import {
  SERIES_REQUEST_SCHEMA,
  type SeriesRequest,
  type SeriesRequestField,
  type SeriesRequestInput,
} from '../series/series-request.js';
import { memberProjects } from './members.js';

export const RANK_BY = ['value', 'change', 'percent_change'] as const;
export type RankBy = (typeof RANK_BY)[number];
export const RANK_ORDERS = ['desc', 'asc'] as const;
export type RankOrder = (typeof RANK_ORDERS)[number];

/** Rows a ranking answers when `top` is not given, and the most it may ask for. */
export const DEFAULT_TOP = 10;
export const MAX_TOP = 1000;

/** A ranking request as an adapter read it (no interval, fill or transform: one value per window). */
export interface RankRequestInput
  extends Pick<SeriesRequestInput, 'metric' | 'projects' | 'from' | 'to' | 'aggregation' | 'asOf'> {
  group?: string | undefined;
  by?: string | undefined;
  order?: string | undefined;
  /** REST sends it as text. */
  top?: string | number | undefined;
}

/** Inclusive first and last day of a window. */
export interface RankWindow {
  from: string;
  to: string;
}

/** A validated ranking. `series` holds the members (slugs), the aggregation and `asOf`; its range is `current`. */
export interface RankRequest {
  series: SeriesRequest;
  by: RankBy;
  order: RankOrder;
  top: number;
  current: RankWindow;
  /** The same number of days just before `current`. */
  previous: RankWindow;
  /** The window before `previous`, read to rank the previous window by change; null when ranking by value. */
  prior: RankWindow | null;
}

export type RankRequestField =
  | Exclude<SeriesRequestField, 'interval' | 'fill' | 'transform' | 'window'>
  | 'group'
  | 'by'
  | 'order'
  | 'top';

/**
 * Validates a ranking request: members as a total's (members.ts), a required range, `by`,
 * `order` and `top`, the rest by the shared series schema; or one 400 ApiError naming each
 * parameter in the caller's words (`names`).
 */
export function validateRankRequest(
  catalog: Catalog,
  input: RankRequestInput,
  names: Readonly<Record<RankRequestField, string>>,
): RankRequest {
  const issues: RequestIssue[] = [];
  const projects = memberProjects(catalog, input.metric, input.group, input.projects, issues);
  if (input.from === undefined) issues.push({ path: ['from'], message: 'the first day of the window is required' });
  if (input.to === undefined) issues.push({ path: ['to'], message: 'the last day of the window is required' });
  const own = OWN_FIELDS.safeParse({ by: input.by, order: input.order, top: input.top });
  if (!own.success) issues.push(...own.error.issues);
  const series = SERIES_REQUEST_SCHEMA.safeParse({ ...input, projects });
  if (!series.success) issues.push(...series.error.issues);
  if (!own.success || !series.success || issues.length > 0) throw issuesError(issues, names);
  const by = own.data.by ?? 'value';
  const first = toEpochDay(series.data.from!);
  const days = toEpochDay(series.data.to!) - first + 1;
  if (first - (by === 'value' ? 1 : 2) * days < EARLIEST_DAY) {
    const message = `the previous window${by === 'value' ? '' : 's'} would start before 0001-01-01`;
    throw issuesError([{ path: ['from'], message }], names);
  }
  const window = (back: number): RankWindow => ({
    from: fromEpochDay(first - back * days),
    to: fromEpochDay(first - (back - 1) * days - 1),
  });
  return {
    series: series.data,
    by,
    order: own.data.order ?? 'desc',
    top: own.data.top ?? DEFAULT_TOP,
    current: { from: series.data.from!, to: series.data.to! },
    previous: window(1),
    prior: by === 'value' ? null : window(2),
  };
}

// Private

/** 0001-01-01, the first day a date of the API may name. */
const EARLIEST_DAY = toEpochDay('0001-01-01');

function oneOf<const T extends readonly string[]>(names: T) {
  return z.string().refine((v): v is T[number] => (names as readonly string[]).includes(v), {
    error: (issue) => `expected one of ${names.join(', ')}, got ${JSON.stringify(clipped(String(issue.input)))}`,
  });
}

const OWN_FIELDS = z.object({
  by: oneOf(RANK_BY).optional(),
  order: oneOf(RANK_ORDERS).optional(),
  top: z
    .union([z.number(), z.string()])
    .transform((v, ctx) => {
      const n = typeof v === 'number' ? v : /^\d{1,4}$/.test(v) ? Number(v) : Number.NaN;
      if (Number.isInteger(n) && n >= 1 && n <= MAX_TOP) return n;
      ctx.addIssue({
        code: 'custom',
        message: `expected a whole number from 1 to ${MAX_TOP}, got ${JSON.stringify(clipped(String(v)))}`,
      });
      return z.NEVER;
    })
    .optional(),
});
