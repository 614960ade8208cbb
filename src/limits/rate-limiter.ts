/**
 * Per-key rate limiting: a token bucket per API key, shared by REST and GraphQL.
 *
 * A bucket holds up to `burst` units and refills at `perMinute / 60` units a second. A
 * request pays one unit when its key is accepted and the rest of its cost (see
 * `priceRequest`) once it is validated; a charge the bucket cannot cover takes nothing and
 * is refused with a 429 whose `Retry-After` says when it could be covered. A cost above
 * the burst is charged as the whole burst (all of a request's charges together), so every
 * request can succeed from a full bucket.
 *
 * Response fields follow draft-ietf-httpapi-ratelimit-headers-10 (September 2025),
 * structured-field syntax: `RateLimit-Policy: "default";q=<burst>;w=<seconds to refill
 * from empty>` (so q/w is the sustained rate and `r` never exceeds `q`), and
 * `RateLimit: "default";r=<whole units left>;t=<seconds until full>`. On a 429, `t` is
 * the `Retry-After` value, because §6 says Retry-After should not point earlier than `t`.
 *
 * Where buckets live is a {@link RateLimitStore}: in this process's memory
 * (`memory-bucket-store.ts`) unless a shared store is configured.
 */
import { ApiError } from '../api/api-error.js';
import type { KeyIdentity } from '../db/api-key-queries.js';
import { counted } from '../counted.js';

/** A bucket's shape: `perMinute` 0 means unlimited. */
export interface RateLimitPolicy {
  perMinute: number;
  burst: number;
}

/** What a store answers for one charge; all durations are whole seconds, rounded up. */
export interface RateLimitOutcome {
  allowed: boolean;
  /** Whole units left after this charge (or, when refused, before it). */
  remaining: number;
  /** Until the bucket is full again. */
  resetSeconds: number;
  /** Until the refused charge could be covered; 0 when allowed. */
  retryAfterSeconds: number;
}

/**
 * Where buckets live. `take` refills the bucket of `key` up to `now` (ms since the epoch)
 * and removes `cost` units when it holds them, in one atomic step.
 */
export interface RateLimitStore {
  take(key: string, cost: number, now: number, policy: RateLimitPolicy): RateLimitOutcome | Promise<RateLimitOutcome>;
}

/** One request's account with its caller's bucket. */
export interface RateLimitMeter {
  /**
   * Charges the request's full cost; the unit paid when the meter was opened counts
   * towards the first charge, and all charges of one request together take at most the
   * burst. Throws the 429 ApiError (with `Retry-After`, `RateLimit` and
   * `RateLimit-Policy`) when the bucket cannot cover it.
   */
  charge(cost: number): Promise<void> | undefined;
}

/** Called with the `RateLimit` and `RateLimit-Policy` fields after every successful charge. */
export type RateLimitHeadersListener = (headers: Readonly<Record<string, string>>) => void;

export interface RateLimiter {
  /**
   * Opens a meter for one request of `caller`, charging one unit: every request that
   * got past authentication costs at least that. Throws the 429 ApiError when even that
   * unit is not there. An unlimited caller gets, at once, a meter that charges nothing
   * (answering undefined, nothing to wait on) and reports no fields.
   */
  open(caller: KeyIdentity, onHeaders: RateLimitHeadersListener): RateLimitMeter | Promise<RateLimitMeter>;
}

/**
 * A limiter applying `defaults` (RATE_LIMIT_PER_MINUTE, RATE_LIMIT_BURST) to every key
 * without its own `ratePerMinute` / `burst`.
 */
export function createRateLimiter(
  defaults: RateLimitPolicy,
  options: { store: RateLimitStore; now?: () => number },
): RateLimiter {
  const { store } = options;
  const now = options.now ?? Date.now;

  const openMetered = async (
    caller: KeyIdentity,
    policy: RateLimitPolicy,
    onHeaders: RateLimitHeadersListener,
  ): Promise<RateLimitMeter> => {
    // A refused charge leaves the request's earlier charges spent (the unit paid at the
    // door, a GraphQL request's other fields), so a retry needs those units again too.
    const take = async (cost: number, spent: number): Promise<void> => {
      const outcome = await store.take(caller.id, cost, now(), policy);
      if (!outcome.allowed) {
        const retryAfterSeconds = outcome.retryAfterSeconds + wholeSeconds((spent * 60_000) / policy.perMinute);
        throw rateLimited({ ...outcome, retryAfterSeconds }, policy, cost + spent);
      }
      onHeaders(rateLimitHeaders(outcome, policy));
    };
    await take(1, 0);
    let prepaid = 1;
    // Units this request's charges took or are taking: all of them together stay within the
    // burst, so a GraphQL request of several charges can pass from a full bucket as well.
    let claimed = 1;
    return {
      async charge(cost) {
        const credit = prepaid;
        const due = Math.min(cost - credit, policy.burst - claimed);
        prepaid = 0;
        if (due <= 0) return;
        const spent = claimed;
        claimed += due;
        try {
          await take(due, spent);
        } catch (error) {
          // Nothing was taken: a later charge (a kept GraphQL answer refused, then run) starts over.
          claimed -= due;
          prepaid = credit;
          throw error;
        }
      },
    };
  };

  return {
    open(caller, onHeaders) {
      const policy = { perMinute: caller.ratePerMinute ?? defaults.perMinute, burst: caller.burst ?? defaults.burst };
      return policy.perMinute <= 0 ? UNLIMITED_METER : openMetered(caller, policy, onHeaders);
    },
  };
}

/** Absorbs floating-point dust from fractional refills (0.1 + 0.2 units and the like). */
export const EPSILON = 1e-9;

/** The meter of a caller without a limit: charges nothing, and answers at once (nothing to wait on). */
export const UNLIMITED_METER: RateLimitMeter = { charge: () => undefined };

/** A duration in milliseconds as whole seconds, rounded up. */
export function wholeSeconds(ms: number): number {
  return Math.ceil(ms / 1000 - EPSILON);
}

// Private

/** The policy name both fields carry. */
const POLICY_NAME = 'default';

/** `RateLimit-Policy` and `RateLimit` for one outcome (draft-ietf-httpapi-ratelimit-headers-10 §3, §4). */
function rateLimitHeaders(outcome: RateLimitOutcome, policy: RateLimitPolicy): Record<string, string> {
  return {
    'ratelimit-policy':
      `"${POLICY_NAME}";q=${policy.burst}` +
      `;w=${Math.max(1, wholeSeconds((policy.burst * 60_000) / policy.perMinute))}`,
    ratelimit: `"${POLICY_NAME}";r=${outcome.remaining};t=${outcome.resetSeconds}`,
  };
}

function rateLimited(outcome: RateLimitOutcome, policy: RateLimitPolicy, cost: number): ApiError {
  const retryAfter = String(outcome.retryAfterSeconds);
  const detail =
    `this request costs ${counted(cost, 'unit')} and the key has ${outcome.remaining} left ` +
    `(at most ${policy.burst}, refilled at ${policy.perMinute} a minute); retry in ${retryAfter} s`;
  return new ApiError('rate-limited', detail, {
    headers: {
      'retry-after': retryAfter,
      ...rateLimitHeaders({ ...outcome, resetSeconds: outcome.retryAfterSeconds }, policy),
    },
  });
}
