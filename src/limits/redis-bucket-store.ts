import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import {
  EPSILON,
  wholeSeconds,
  type RateLimitOutcome,
  type RateLimitPolicy,
  type RateLimitStore,
} from './rate-limiter.js';

export interface RedisRateLimitStore extends RateLimitStore {
  take(key: string, cost: number, now: number, policy: RateLimitPolicy): Promise<RateLimitOutcome>;
  /**
   * Whether the last charge reached Redis and the connection is still up (false while it
   * is unreachable and the fallback counts, also before any charge).
   */
  readonly shared: boolean;
  close(): Promise<void>;
}

/** How long a charge waits for Redis before the fallback answers: a request never hangs on it. */
const COMMAND_TIMEOUT_MS = 250;

/** During an outage, charges go straight to the fallback and Redis is tried again after this long. */
const RETRY_AFTER_FAILURE_MS = 1_000;

/**
 * Token buckets in Redis, shared by every instance and worker that points at it: the same
 * arithmetic as the in-memory store, done by one Lua script so a read, refill and spend is
 * atomic (no two instances can both spend the last unit). A script rather than
 * rate-limiter-flexible: its Redis limiters count points per fixed window (bursts by
 * combining two windows), not in a bucket refilled continuously, so they could not give
 * the in-memory store's remaining units, time until full and Retry-After exactly, and the
 * fallback would then count differently from Redis. The script is sent once and run by
 * its digest (EVALSHA, through ioredis's `defineCommand`).
 *
 * The time is the caller's `now`, not Redis's TIME: the store's contract is the memory
 * store's (tests inject a clock, and the fallback must count in the same time). Clocks of
 * instances may disagree, so a bucket's time never moves back: a charge from a clock
 * behind refills nothing until that clock passes the bucket's, and no interval is
 * refilled twice. Skew can delay a refill by its size, never grant extra units. Buckets
 * expire once they would be full again, so Redis holds only keys in use.
 *
 * If Redis cannot be reached (or answers slower than 250 ms), the charge is made in this
 * process's own buckets instead, with one warning per outage: the service keeps serving
 * (fail open) with limits per instance, as without Redis. While it is out, Redis is tried
 * again once a second (so a Redis that stopped answering costs one request in a second
 * 250 ms, not every request), and limits are shared again as soon as it answers. A
 * charge that gave up waiting is not spent again when a stalled Redis wakes and runs it.
 */
export function createRedisRateLimitStore(url: string, fallback: RateLimitStore, logger: Logger): RedisRateLimitStore {
  const redis = new Redis(url, {
    lazyConnect: false,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
    connectTimeout: 2_000,
    retryStrategy: (times) => Math.min(100 * 2 ** times, 1_000),
  });
  // Reported once per outage below, not once per reconnect attempt. A charge refused while
  // the connection is down only says the connection is not writable: the last error says
  // why it is down (refused, a wrong password), which an operator needs to tell them apart.
  let lastConnectionError: Error | undefined;
  redis.on('error', (error: Error) => {
    lastConnectionError = error;
  });
  redis.on('ready', () => {
    lastConnectionError = undefined;
  });
  redis.defineCommand('takeTokens', { numberOfKeys: 1, lua: TAKE_SCRIPT });
  let shared = true;
  let retryAt = 0;
  // Redis's clock minus this process's when the last answer came back: the clocks'
  // difference less that answer's way back, so never more than the difference itself. A
  // charge's deadline is when this process gives it up, by Redis's clock, at the earliest:
  // a stalled Redis that wakes after it never runs the charge, however slow the round trip
  // that measured it.
  let offset: number | undefined;
  const observe = (redisMs: number) => {
    offset = redisMs - Date.now();
  };
  // Measured once each connection is up, so a process's first charges have a deadline too:
  // a charge sent before the measurement answers waits for it, at most a timeout's length.
  let measured: Promise<void> | undefined;
  redis.on('ready', () => {
    measured = redis.time().then(
      ([seconds, micros]) => observe(Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)),
      () => {},
    );
  });
  const send = async (
    key: string,
    cost: number,
    now: number,
    policy: RateLimitPolicy,
    perMs: number,
    again = false,
  ): Promise<[number, string]> => {
    if (offset === undefined && measured !== undefined)
      await Promise.race([measured, sleep(COMMAND_TIMEOUT_MS, undefined, { ref: false })]);
    const sent = Date.now();
    const deadline = offset === undefined ? 0 : sent + offset + COMMAND_TIMEOUT_MS;
    const [allowed, tokensText, redisMs] = (await (redis as unknown as TakeTokens).takeTokens(
      `metrics:rate:${key}`,
      cost,
      now,
      policy.burst,
      perMs,
      deadline,
    )) as [number, string, number];
    observe(redisMs);
    if (allowed !== LATE) return [allowed, tokensText];
    // Answered in time, yet late by Redis's clock (this clock went back, or the round trip
    // took nearly the whole timeout): nothing was taken. Sent once more with the clocks
    // measured afresh; late again, it is counted in the fallback like any slow answer.
    if (again) throw new Error('Redis answered every try too late by its own clock');
    return send(key, cost, now, policy, perMs, true);
  };
  // The first charges may come before the first connection is up: they wait for it (once, a
  // second at most) rather than fall back; during a later outage nothing waits.
  const connected = new Promise<void>((resolve) => {
    redis.once('ready', resolve);
    setTimeout(resolve, 1_000).unref();
  });

  return {
    // Before its first charge a process has not tried Redis: the connection tells then.
    get shared() {
      return shared && redis.status === 'ready';
    },
    async take(key, cost, now, policy) {
      const perMs = policy.perMinute / 60_000;
      if (!shared) {
        if (Date.now() < retryAt) return fallback.take(key, cost, now, policy);
        // This charge tries Redis; the charges beside it keep to the fallback until it answers.
        retryAt = Date.now() + RETRY_AFTER_FAILURE_MS;
      }
      if (redis.status === 'connecting' || redis.status === 'connect') await connected;
      try {
        const [allowed, tokensText] = await send(key, cost, now, policy, perMs);
        if (!shared) logger.info('rate limits are shared through Redis again');
        shared = true;
        return outcomeOf(allowed === 1, Number(tokensText), cost, policy.burst, perMs);
      } catch (error) {
        if (shared)
          logger.warn(
            { err: redis.status === 'ready' ? error : (lastConnectionError ?? error) },
            'Redis is unreachable: rate limits are kept in this process until it is back',
          );
        shared = false;
        retryAt = Date.now() + RETRY_AFTER_FAILURE_MS;
        return fallback.take(key, cost, now, policy);
      }
    },
    close: async () => {
      redis.disconnect();
    },
  };
}

// Private

interface TakeTokens {
  takeTokens(key: string, cost: number, now: number, burst: number, perMs: number, deadline: number): Promise<unknown>;
}

/** What the script answers for a charge that reached it after its deadline: nothing taken. */
const LATE = -1;

/** The memory store's outcome, from the tokens left after the charge (or before it, when refused). */
function outcomeOf(allowed: boolean, tokens: number, cost: number, burst: number, perMs: number): RateLimitOutcome {
  return {
    allowed,
    remaining: Math.floor(tokens + EPSILON),
    resetSeconds: wholeSeconds((burst - tokens) / perMs),
    retryAfterSeconds: allowed ? 0 : Math.max(1, wholeSeconds((cost - tokens) / perMs)),
  };
}

/**
 * KEYS[1] the bucket; ARGV cost, now (ms), burst, units per ms, deadline (ms by Redis's
 * clock; 0 for none). Returns {allowed 1|0, tokens left, Redis's clock in ms} (tokens as
 * text: Redis would truncate a Lua number to an integer), or {-1, '0', clock} past the
 * deadline. A charge that waited in a stalled Redis longer than the caller did was made in
 * the fallback already: spending it again here, once Redis wakes, would charge it twice.
 * (TIME before writes needs effects replication: Redis 5 or later.)
 */
const TAKE_SCRIPT = `
local cost = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local per_ms = tonumber(ARGV[4])
local deadline = tonumber(ARGV[5])
local clock = redis.call('TIME')
local clock_ms = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
if deadline > 0 and clock_ms > deadline then return {${LATE}, '0', clock_ms} end
local bucket = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local held = burst
local at = now
if bucket[1] then
  local last = tonumber(bucket[2])
  held = math.min(burst, tonumber(bucket[1]) + math.max(0, now - last) * per_ms)
  at = math.max(now, last)
end
local allowed = held + ${EPSILON} >= cost
local tokens = held
if allowed then tokens = math.max(0, held - cost) end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens), 'at', string.format('%.17g', at))
-- Lua writes 1e17 and beyond as '1e+17', which PEXPIRE refuses; 1e16 ms is 300,000 years.
redis.call('PEXPIRE', KEYS[1], math.min(math.ceil((burst - tokens) / per_ms) + 1000, 1e16))
if allowed then return {1, string.format('%.17g', tokens), clock_ms} end
return {0, string.format('%.17g', tokens), clock_ms}
`;
