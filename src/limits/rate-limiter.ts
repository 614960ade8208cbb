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
  /**
   * The request's price so far, in units: the unit paid at the door plus what its charges
   * asked beyond it (`max(1, Σ costs)`), whether or not a burst cap or an unlimited key
   * took less. 0 for a dry run that was charged nothing, and on public routes.
   */
  readonly units: number;
  /** The caller's limit and balance now, charging nothing; also sets the `RateLimit` fields. */
  quote(): Promise<RateLimitQuote>;
}

/** A key's bucket as a dry run reports it: all null for a key without a limit. */
export interface RateLimitQuote {
  /** The most units the key can spend at once (its burst). */
  limit: number | null;
  /** Whole units left now. */
  remaining: number | null;
  /** Seconds until the bucket is full again. */
  resetSeconds: number | null;
}

/** Called with the `RateLimit` and `RateLimit-Policy` fields after every successful charge. */
export type RateLimitHeadersListener = (headers: Readonly<Record<string, string>>) => void;

export interface RateLimiter {
  /**
   * Opens a meter for one request of `caller`, charging one unit: every request that
   * got past authentication costs at least that. Throws the 429 ApiError when even that
   * unit is not there. An unlimited caller gets, at once, a meter that charges nothing
   * (answering undefined, nothing to wait on) and reports no fields.
   *
   * `dryRun`: the request only asks its price (dry-run.ts). Nothing is taken from the key's
   * bucket; one unit is taken from the key's dry-run bucket instead (the same size and rate
   * as its own, kept apart), so dry runs are free for the balance but never unlimited. A
   * charge on such a meter pays the door's unit first, as an ordinary request would.
   */
  open(
    caller: KeyIdentity,
    onHeaders: RateLimitHeadersListener,
    dryRun?: boolean,
  ): RateLimitMeter | Promise<RateLimitMeter>;
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
    dryRun: boolean,
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
    if (dryRun) await takeDryRun(store, caller.id, now(), policy);
    else await take(1, 0);
    let opened = !dryRun;
    let units = dryRun ? 0 : 1;
    let prepaid = 1;
    // Units this request's charges took or are taking: all of them together stay within the
    // burst, so a GraphQL request of several charges can pass from a full bucket as well.
    let claimed = 1;
    return {
      get units() {
        return units;
      },
      async quote() {
        const outcome = await store.take(caller.id, 0, now(), policy);
        onHeaders(rateLimitHeaders(outcome, policy));
        return { limit: policy.burst, remaining: outcome.remaining, resetSeconds: outcome.resetSeconds };
      },
      async charge(cost) {
        if (!opened) {
          await take(1, 0);
          opened = true;
          units = 1;
        }
        const credit = prepaid;
        const added = Math.max(0, cost - credit);
        const due = Math.min(cost - credit, policy.burst - claimed);
        prepaid = 0;
        if (due <= 0) {
          units += added;
          return;
        }
        const spent = claimed;
        claimed += due;
        try {
          await take(due, spent);
          units += added;
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
    open(caller, onHeaders, dryRun = false) {
      const policy = { perMinute: caller.ratePerMinute ?? defaults.perMinute, burst: caller.burst ?? defaults.burst };
      return policy.perMinute <= 0 ? unlimitedMeter(dryRun) : openMetered(caller, policy, onHeaders, dryRun);
    },
  };
}

/** Absorbs floating-point dust from fractional refills (0.1 + 0.2 units and the like). */
export const EPSILON = 1e-9;

/** The meter of a public route: charges nothing, counts nothing, and answers at once (nothing to wait on). */
export const UNLIMITED_METER: RateLimitMeter = {
  charge: () => undefined,
  units: 0,
  quote: async () => NO_LIMIT,
};

/** A duration in milliseconds as whole seconds, rounded up. */
export function wholeSeconds(ms: number): number {
  return Math.ceil(ms / 1000 - EPSILON);
}

// Private

/** What a dry run reports of a key without a limit. */
const NO_LIMIT: RateLimitQuote = Object.freeze({ limit: null, remaining: null, resetSeconds: null });

/** The meter of a key without a limit: takes nothing and answers at once, but counts the request's price. */
function unlimitedMeter(dryRun: boolean): RateLimitMeter {
  let units = dryRun ? 0 : 1;
  let prepaid = 1;
  return {
    get units() {
      return units;
    },
    quote: async () => NO_LIMIT,
    charge(cost) {
      if (units === 0) units = 1;
      units += Math.max(0, cost - prepaid);
      prepaid = 0;
      return undefined;
    },
  };
}

/** Takes a dry run's unit from the key's dry-run bucket, or throws its 429. */
async function takeDryRun(store: RateLimitStore, id: string, now: number, policy: RateLimitPolicy): Promise<void> {
  const outcome = await store.take(`dry-run:${id}`, 1, now, policy);
  if (outcome.allowed) return;
  const retryAfter = String(outcome.retryAfterSeconds);
  throw new ApiError(
    'rate-limited',
    `too many dry runs: a key may make ${policy.burst} at once, refilled at ${policy.perMinute} a minute, ` +
      `beside its own limit; retry in ${retryAfter} s`,
    { headers: { 'retry-after': retryAfter } },
  );
}

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
