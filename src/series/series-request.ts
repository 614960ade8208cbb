import { z } from 'zod';
import type { MetricDefinition } from '../catalog/load-catalog.js';
import { issuesError } from '../api/api-error.js';
import { canonicalInstant, INSTANT_EXPECTED, isIsoDate } from '../dates.js';
import {
  AGGREGATIONS,
  DEFAULT_WINDOW,
  FILLS,
  INTERVALS,
  MAX_WINDOW,
  TRANSFORMS,
  type SeriesOptions,
} from './series-options.js';
import { clipped } from '../clipped.js';
import { MAX_LAG_DAYS, VINTAGES, type Vintage } from './vintage.js';

/**
 * A series request as an adapter read it, before any check. The metric is already known
 * (REST answers 404 for an unknown name, GraphQL's enum admits only catalog metrics); the
 * other fields hold what the caller sent.
 */
export interface SeriesRequestInput {
  metric: MetricDefinition;
  /** Undefined when the caller named no project; segments are kept as sent (`''` for `a,,b`). */
  projects?: readonly string[] | undefined;
  from?: string | undefined;
  to?: string | undefined;
  /** The shaping options, as names (`week`, `sum`, …); undefined where the caller gave none. */
  interval?: string | undefined;
  aggregation?: string | undefined;
  fill?: string | undefined;
  transform?: string | undefined;
  /** A whole number; REST sends it as text. */
  window?: string | number | undefined;
  /** An RFC 3339 instant, or `YYYY-MM-DD` for the end of that UTC day: the data as served then. */
  asOf?: string | undefined;
  /** Which of each day's values to read (see vintage.ts); undefined means `latest`. */
  vintage?: string | undefined;
  /** Days after each day for `known_after`; a whole number, REST sends it as text. */
  lagDays?: string | number | undefined;
  /** The newest points (buckets) of each series to answer with; a whole number, REST sends it as text. */
  limitPerProject?: string | number | undefined;
}

/** A request every later step can trust: allowed distinct slugs, ordered bounds, resolved options. */
export interface SeriesRequest {
  metric: MetricDefinition;
  /** Distinct slugs in the order first requested. */
  slugs: readonly string[];
  /** Inclusive bounds; null means from the first or up to the last stored day. */
  from: string | null;
  to: string | null;
  options: SeriesOptions;
  /**
   * Read the values as they were served at this instant (UTC, ISO 8601 with up to
   * microseconds, as PostgreSQL stores write times); null reads the current values.
   */
  asOf: string | null;
  /** Which of each day's values are read; `latest` reads the current ones (or `asOf`'s). */
  vintage: Vintage;
  /** Days after each day a `known_after` read looks at; null for the other vintages. */
  lagDays: number | null;
  /** Only the newest this many points (buckets) of each series in the range, still ascending; absent: all. */
  limitPerProject?: number | null;
}

/** The fields a caller can get wrong; each adapter names them in its own vocabulary. */
export type SeriesRequestField =
  | 'projects'
  | 'from'
  | 'to'
  | 'interval'
  | 'aggregation'
  | 'fill'
  | 'transform'
  | 'window'
  | 'asOf'
  | 'vintage'
  | 'lagDays'
  | 'limitPerProject';

/** `YYYY-MM-DD` naming a real calendar day. */
const isoDateSchema = z.string().refine(isIsoDate, {
  error: (issue) => `expected a real calendar date as YYYY-MM-DD, got ${JSON.stringify(issue.input)}`,
});

/** One of a list of names, refused with the list itself so the caller sees what is allowed. */
function oneOf<const T extends readonly string[]>(names: T) {
  return z.string().refine((v): v is T[number] => (names as readonly string[]).includes(v), {
    error: (issue) => `expected one of ${names.join(', ')}, got ${JSON.stringify(clipped(String(issue.input)))}`,
  });
}

/** A whole number from 1 to `max`, given as a number (GraphQL) or as text (REST). */
function wholeNumberSchema(max: number, what: string) {
  return z.union([z.number(), z.string()]).transform((v, ctx) => {
    const n = typeof v === 'number' ? v : /^\d{1,6}$/.test(v) ? Number(v) : Number.NaN;
    if (Number.isInteger(n) && n >= 1 && n <= max) return n;
    ctx.addIssue({
      code: 'custom',
      message: `expected a whole number of ${what} from 1 to ${max}, got ${JSON.stringify(clipped(String(v)))}`,
    });
    return z.NEVER;
  });
}

const windowSchema = wholeNumberSchema(MAX_WINDOW, 'buckets');

/** The largest `limitPerProject`: more than ten years of days, so any larger limit would be no limit. */
export const MAX_LIMIT_PER_PROJECT = 10_000;

const lagDaysSchema = z.union([z.number(), z.string()]).transform((v, ctx) => {
  const n = typeof v === 'number' ? v : /^\d{1,5}$/.test(v) ? Number(v) : Number.NaN;
  if (Number.isInteger(n) && n >= 0 && n <= MAX_LAG_DAYS) return n;
  ctx.addIssue({
    code: 'custom',
    message: `expected a whole number of days from 0 to ${MAX_LAG_DAYS}, got ${JSON.stringify(clipped(String(v)))}`,
  });
  return z.NEVER;
});

/** An instant as the canonical UTC text PostgreSQL compares write times with (see `canonicalInstant`). */
const instantSchema = z.string().transform((text, ctx) => {
  const instant = canonicalInstant(text);
  if (instant === undefined) {
    ctx.addIssue({ code: 'custom', message: INSTANT_EXPECTED(text) });
    return z.NEVER;
  }
  return instant;
});

/**
 * The one validation of a series request, shared by REST and GraphQL: the rules of
 * docs/decisions.md for projects (required where the catalog says so, allowed slugs only,
 * case-sensitive, duplicates collapsed, no empty segment) and dates (real days, start not
 * after end). Each issue's path starts with the {@link SeriesRequestField} it concerns.
 */
export const SERIES_REQUEST_SCHEMA = z
  .object({
    metric: z.custom<MetricDefinition>(),
    projects: z.array(z.string()).optional(),
    from: isoDateSchema.optional(),
    to: isoDateSchema.optional(),
    interval: oneOf(INTERVALS).optional(),
    aggregation: oneOf(AGGREGATIONS).optional(),
    fill: oneOf(FILLS).optional(),
    transform: oneOf(TRANSFORMS).optional(),
    window: windowSchema.optional(),
    asOf: instantSchema.optional(),
    vintage: oneOf(VINTAGES).optional(),
    lagDays: lagDaysSchema.optional(),
    limitPerProject: wholeNumberSchema(MAX_LIMIT_PER_PROJECT, 'points').optional(),
  })
  .transform((input, ctx): SeriesRequest => {
    const slugs = resolveSlugs(input.metric, input.projects, ctx);
    if (input.from !== undefined && input.to !== undefined && input.from > input.to) {
      ctx.addIssue({
        code: 'custom',
        path: ['from'],
        message: `start date ${input.from} is after end date ${input.to}`,
      });
    }
    const transform = input.transform ?? null;
    if (input.window !== undefined && transform !== 'moving_average') {
      ctx.addIssue({ code: 'custom', path: ['window'], message: 'window goes with the moving_average transform only' });
    }
    const vintage = input.vintage ?? 'latest';
    if (vintage !== 'latest' && input.metric.formula !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['vintage'],
        message: `${input.metric.name} is computed from its inputs' current values; it has no vintages`,
      });
    }
    if (vintage === 'known_after' && input.lagDays === undefined) {
      ctx.addIssue({ code: 'custom', path: ['lagDays'], message: 'the known_after vintage needs a number of days' });
    }
    if (vintage !== 'known_after' && input.lagDays !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['lagDays'],
        message: 'a number of days goes with the known_after vintage only',
      });
    }
    const options: SeriesOptions = {
      interval: input.interval ?? 'day',
      aggregation: input.aggregation ?? input.metric.defaultAggregation,
      fill: input.fill ?? 'none',
      transform,
      window: transform === 'moving_average' ? (input.window ?? DEFAULT_WINDOW) : null,
    };
    return {
      metric: input.metric,
      slugs,
      from: input.from ?? null,
      to: input.to ?? null,
      options,
      asOf: input.asOf ?? null,
      vintage,
      lagDays: vintage === 'known_after' ? (input.lagDays ?? null) : null,
      ...(input.limitPerProject === undefined ? {} : { limitPerProject: input.limitPerProject }),
    };
  });

/**
 * Validates a series request for REST: {@link SERIES_REQUEST_SCHEMA}, or one 400 ApiError
 * whose `errors` name each parameter as REST calls it (`names`: `start_date` for `from`).
 */
export function validateSeriesRequest(
  input: SeriesRequestInput,
  names: Readonly<Record<SeriesRequestField, string>>,
): SeriesRequest {
  const result = SERIES_REQUEST_SCHEMA.safeParse(input);
  if (result.success) return result.data;
  throw issuesError(result.error.issues, names);
}

// Private

/** Offending projects named one by one in an error; any more are only counted. */
const MAX_NAMED_PROJECTS = 5;

function resolveSlugs(
  metric: MetricDefinition,
  projects: readonly string[] | undefined,
  ctx: z.RefinementCtx,
): string[] {
  // Built only for an error: joining a long list on every request costs more than the check.
  const allowed = () => `allowed: ${metric.projects.join(', ')}`;
  if (projects === undefined) {
    if (metric.projectRequired) {
      ctx.addIssue({
        code: 'custom',
        path: ['projects'],
        message: `a project is required for ${metric.name}; ${allowed()}`,
      });
    }
    return [...metric.projects];
  }
  if (projects.length === 0) {
    ctx.addIssue({ code: 'custom', path: ['projects'], message: `name at least one project; ${allowed()}` });
  }
  // Each distinct offending value once, the first few by name: a 1 MB list of bad slugs
  // must not become an answer of megabytes that repeats the allowed list per item.
  const distinct = [...new Set(projects)];
  const offending = distinct.filter((slug) => slug === '' || !metric.projects.includes(slug));
  for (const slug of offending.slice(0, MAX_NAMED_PROJECTS)) {
    if (slug === '') {
      ctx.addIssue({ code: 'custom', path: ['projects'], message: `empty project name in the list; ${allowed()}` });
    } else {
      const sameLetters = metric.projects.find((p) => p.toLowerCase() === slug.toLowerCase());
      const hint =
        sameLetters === undefined ? '' : ` (slugs are case-sensitive: did you mean ${JSON.stringify(sameLetters)}?)`;
      ctx.addIssue({
        code: 'custom',
        path: ['projects'],
        message: `${JSON.stringify(clipped(slug))} is not a project of ${metric.name}${hint}; ${allowed()}`,
      });
    }
  }
  if (offending.length > MAX_NAMED_PROJECTS) {
    ctx.addIssue({
      code: 'custom',
      path: ['projects'],
      message: `and ${offending.length - MAX_NAMED_PROJECTS} more that are not projects of ${metric.name}`,
    });
  }
  return distinct;
}
