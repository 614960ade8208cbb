import { z } from 'zod';
import { issuesError } from '../api/api-error.js';
import { clipped } from '../clipped.js';
import { DEFAULT_LOOKBACK_DAYS, MAX_LOOKBACK_DAYS, MIN_LOOKBACK_DAYS } from './revision-profiles.js';

/** A profile's window in days: a whole number from 7 to 3650 (REST sends text); omitted means 180. */
const LOOKBACK_SCHEMA = z.union([z.number(), z.string()]).transform((v, ctx) => {
  const n = typeof v === 'number' ? v : /^\d{1,5}$/.test(v) ? Number(v) : Number.NaN;
  if (Number.isInteger(n) && n >= MIN_LOOKBACK_DAYS && n <= MAX_LOOKBACK_DAYS) return n;
  ctx.addIssue({
    code: 'custom',
    path: ['lookbackDays'],
    message:
      `expected a whole number of days from ${MIN_LOOKBACK_DAYS} to ${MAX_LOOKBACK_DAYS}, ` +
      `got ${JSON.stringify(clipped(String(v)))}`,
  });
  return z.NEVER;
});

/** Validates a profile's window, or a 400 ApiError naming the parameter `param`. */
export function validateLookbackDays(value: string | number | undefined | null, param: string): number {
  if (value === undefined || value === null) return DEFAULT_LOOKBACK_DAYS;
  const result = LOOKBACK_SCHEMA.safeParse(value);
  if (result.success) return result.data;
  throw issuesError(result.error.issues, { lookbackDays: param });
}
