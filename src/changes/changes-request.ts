import { z } from 'zod';
import { issuesError } from '../api/api-error.js';
import { canonicalInstant, INSTANT_EXPECTED, isIsoDate } from '../dates.js';
import { clipped } from '../clipped.js';

/** Rows per page unless the caller asks otherwise, and the most one page may hold. */
export const DEFAULT_CHANGES_LIMIT = 1000;
export const MAX_CHANGES_LIMIT = 10_000;

/**
 * Where a page of the feed starts: after the change numbered `seq` (commit order; see
 * migration 0007), among the writes made at or after `since`. `seq` is decimal text.
 */
export interface FeedPosition {
  since: string;
  seq: string;
}

export interface ChangesRequest {
  position: FeedPosition;
  limit: number;
}

/** A changes request as an adapter read it, before any check; field names are the caller's. */
export interface ChangesRequestInput {
  since?: string | undefined;
  limit?: string | number | undefined;
  cursor?: string | undefined;
}

/** The caller's names for the request's fields (REST: since, limit, cursor; GraphQL: since, first, after). */
export type ChangesParams = Readonly<Record<keyof ChangesRequestInput, string>>;

/**
 * The one validation of a changes request, shared by REST and GraphQL, in the caller's
 * words (`params`, which messages and issue paths use): `since` (an RFC 3339 instant, or
 * a date meaning the start of that UTC day), `limit` (1 to 10,000), and a `cursor` from an
 * earlier page, which carries its own `since` (given both, they must agree). Every problem
 * is reported, each issue's path starting with the parameter it concerns.
 */
export function changesRequestSchema(params: ChangesParams) {
  return z
    .object({
      since: z.string().optional(),
      limit: z.union([z.string(), z.number()]).optional(),
      cursor: z.string().optional(),
    })
    .transform((input, ctx): ChangesRequest => {
      let failed = false;
      const problem = (param: string, message: string) => {
        failed = true;
        ctx.addIssue({ code: 'custom', path: [param], message });
      };
      const since = input.since === undefined ? undefined : sinceInstant(input.since);
      if (input.since !== undefined && since === undefined) {
        problem(params.since, INSTANT_EXPECTED(input.since, 'start'));
      }
      const limit = input.limit === undefined ? DEFAULT_CHANGES_LIMIT : pageSize(input.limit);
      if (limit === undefined) {
        const got = JSON.stringify(clipped(String(input.limit)));
        problem(params.limit, `expected a whole number from 1 to ${MAX_CHANGES_LIMIT}, got ${got}`);
      }
      const resumed = input.cursor === undefined ? undefined : decodeCursor(input.cursor);
      if (input.cursor !== undefined && resumed === undefined) {
        problem(
          params.cursor,
          'not a cursor this feed handed out; ' + 'pass `next` or `cursor` of an earlier page unchanged',
        );
      }
      if (input.since === undefined && input.cursor === undefined) {
        problem(
          params.since,
          'give the instant to start from (RFC 3339, e.g. 2026-06-30T00:00:00Z), ' +
            `or a ${params.cursor} from an earlier page`,
        );
      }
      if (resumed !== undefined && since !== undefined && resumed.since !== since) {
        problem(
          params.cursor,
          `this cursor continues the feed since ${resumed.since}, not since ${since}; ` +
            `leave ${params.since} out or give the same instant`,
        );
      }
      if (failed) return z.NEVER;
      return { position: resumed ?? { since: since!, seq: '0' }, limit: limit! };
    });
}

/** Validates a changes request against `schema`, or throws one 400 ApiError naming each parameter. */
export function validateChangesRequest(
  schema: ReturnType<typeof changesRequestSchema>,
  input: ChangesRequestInput,
): ChangesRequest {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw issuesError(result.error.issues);
}

/** An opaque cursor for a position: base64url of a small JSON object. */
export function encodeCursor(position: FeedPosition): string {
  return Buffer.from(JSON.stringify({ v: 1, since: position.since, s: position.seq })).toString('base64url');
}

// Private

function pageSize(value: string | number): number | undefined {
  const n = typeof value === 'number' ? value : /^\d{1,6}$/.test(value) ? Number(value) : Number.NaN;
  return Number.isInteger(n) && n >= 1 && n <= MAX_CHANGES_LIMIT ? n : undefined;
}

function sinceInstant(text: string): string | undefined {
  return isIsoDate(text) ? `${text}T00:00:00.000000Z` : canonicalInstant(text);
}

/** PostgreSQL's largest bigint, the highest sequence a change can have. */
const MAX_SEQ = 9_223_372_036_854_775_807n;

const CURSOR_SCHEMA = z.object({
  v: z.literal(1),
  since: z.string().refine((text) => canonicalInstant(text) === text),
  // A sequence is a bigint: a larger number (still 19 digits) would reach the query and fail there as a 500.
  s: z
    .string()
    .regex(/^\d{1,19}$/)
    .refine((text) => BigInt(text) <= MAX_SEQ),
});

function decodeCursor(text: string): FeedPosition | undefined {
  if (text.length > 200 || !/^[A-Za-z0-9_-]+$/.test(text)) return undefined;
  try {
    const parsed = CURSOR_SCHEMA.safeParse(JSON.parse(Buffer.from(text, 'base64url').toString('utf8')));
    return parsed.success ? { since: parsed.data.since, seq: parsed.data.s } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Rate-limit units of a page: one per 1,000 changes asked for. A page reads no more rows of
 * the change log than it asks for, after two index lookups that find where it starts
 * (`readChanges`), so what it asks for is the work it costs.
 */
export function changesCost(request: ChangesRequest): number {
  return Math.ceil(request.limit / DEFAULT_CHANGES_LIMIT);
}
