import { availableParallelism } from 'node:os';
import { z } from 'zod';

/**
 * The default of every variable that has one, as the README's configuration table must
 * state it (a test compares them).
 */
export const ENV_DEFAULTS = Object.freeze({
  HOST: '127.0.0.1',
  PORT: 4000,
  DATABASE_POOL_SIZE: 10,
  REPLICA_MAX_LAG_SECONDS: 30,
  PGLITE_DIR: '.data/pglite',
  STATEMENT_TIMEOUT_SECONDS: 5,
  CONNECT_TIMEOUT_SECONDS: 5,
  STALLED_CLIENT_SECONDS: 60,
  CACHE_MAX_AGE_SECONDS: 60,
  RATE_LIMIT_PER_MINUTE: 600,
  RATE_LIMIT_BURST: 1200,
  REFUSED_KEYS_PER_MINUTE: 60,
  SUBSCRIPTIONS_PER_KEY: 10,
  SUBSCRIPTIONS_MAX: 1000,
  RESPONSE_CACHE_MB: 64,
  GRAPHIQL: 'on',
  GRAPHIQL_LOADS_PER_MINUTE: 60,
  EXPLORER: 'on',
  METRICS: 'off',
  SHUTDOWN_GRACE_SECONDS: 10,
  SEED_YEARS: 3,
  WORKERS: 1,
  HOOKS_RETRY_BASE_SECONDS: 10,
  HOOKS_FAIL_AFTER_HOURS: 24,
  HOOKS_ALLOW_PRIVATE: 'off',
  LOG_LEVEL: 'info',
});

const onOff = z.enum(['on', 'off']).transform((v) => v === 'on');
const commaList = z.string().transform((v) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== ''),
);
/** A comma list whose every entry must pass `valid`; each one that does not is named by `problem`. */
const commaListOf = (valid: (entry: string) => boolean, problem: (entry: string) => string) =>
  commaList.superRefine((entries, ctx) => {
    for (const entry of entries) if (!valid(entry)) ctx.addIssue({ code: 'custom', message: problem(entry) });
  });
const D = ENV_DEFAULTS;

const envSchema = z.object({
  HOST: z.string().min(1).default(D.HOST),
  PORT: z.coerce.number().int().min(0).max(65535).default(D.PORT),
  DATABASE_URL: z
    .url({
      protocol: /^postgres(ql)?$/,
      hostname: /./,
      error: 'expected a postgres:// or postgresql:// URL, e.g. postgres://user:pass@db.example:5432/metrics',
    })
    .optional(),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(D.DATABASE_POOL_SIZE),
  DATABASE_READ_URLS: commaListOf(
    (url) => /^postgres(ql)?:\/\/[^/]/.test(url),
    (url) =>
      `expected postgres:// URLs joined with commas, got ` +
      `${JSON.stringify(url.replace(/\/\/[^@]*@/, '//…@').slice(0, 80))}`,
  ).optional(),
  REPLICA_MAX_LAG_SECONDS: z.coerce.number().positive().max(86_400).default(D.REPLICA_MAX_LAG_SECONDS),
  PGLITE_DIR: z.string().min(1).default(D.PGLITE_DIR),
  STATEMENT_TIMEOUT_SECONDS: z.coerce.number().positive().max(600).default(D.STATEMENT_TIMEOUT_SECONDS),
  CONNECT_TIMEOUT_SECONDS: z.coerce.number().positive().max(120).default(D.CONNECT_TIMEOUT_SECONDS),
  STALLED_CLIENT_SECONDS: z.coerce.number().positive().max(3600).default(D.STALLED_CLIENT_SECONDS),
  API_KEYS: commaList.optional(),
  CACHE_MAX_AGE_SECONDS: z.coerce.number().int().min(0).default(D.CACHE_MAX_AGE_SECONDS),
  // A browser's Origin is compared exactly: a path, a trailing slash or 'null' would never match,
  // or match any sandboxed page.
  CORS_ORIGINS: commaListOf(
    isOrigin,
    (origin) =>
      `expected origins such as https://app.example (scheme, host and optional ` +
      `port, nothing after) joined with commas, got ${JSON.stringify(origin.slice(0, 80))}`,
  ).optional(),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(D.RATE_LIMIT_PER_MINUTE),
  RATE_LIMIT_BURST: z.coerce.number().int().min(1).default(D.RATE_LIMIT_BURST),
  REFUSED_KEYS_PER_MINUTE: z.coerce.number().int().min(0).default(D.REFUSED_KEYS_PER_MINUTE),
  REDIS_URL: z
    .url({ protocol: /^rediss?$/, error: 'expected a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379' })
    .optional(),
  SUBSCRIPTIONS_PER_KEY: z.coerce.number().int().min(0).default(D.SUBSCRIPTIONS_PER_KEY),
  SUBSCRIPTIONS_MAX: z.coerce.number().int().min(0).default(D.SUBSCRIPTIONS_MAX),
  RESPONSE_CACHE_MB: z.coerce.number().min(0).max(65536).default(D.RESPONSE_CACHE_MB),
  GRAPHIQL: onOff.prefault(D.GRAPHIQL),
  GRAPHIQL_LOADS_PER_MINUTE: z.coerce.number().int().min(0).default(D.GRAPHIQL_LOADS_PER_MINUTE),
  EXPLORER: onOff.prefault(D.EXPLORER),
  METRICS: z.enum(['off', 'on', 'public']).default(D.METRICS),
  SHUTDOWN_GRACE_SECONDS: z.coerce.number().min(0).max(600).default(D.SHUTDOWN_GRACE_SECONDS),
  SEED_YEARS: z.coerce.number().int().min(1).max(30).default(D.SEED_YEARS),
  WORKERS: z.union([z.literal('auto'), z.coerce.number().int().min(1).max(64)]).default(D.WORKERS),
  HOOKS_RETRY_BASE_SECONDS: z.coerce.number().positive().max(3600).default(D.HOOKS_RETRY_BASE_SECONDS),
  HOOKS_FAIL_AFTER_HOURS: z.coerce.number().positive().max(720).default(D.HOOKS_FAIL_AFTER_HOURS),
  HOOKS_ALLOW_PRIVATE: onOff.prefault(D.HOOKS_ALLOW_PRIVATE),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default(D.LOG_LEVEL),
});

/** The variables the service reads, in the order of the README's table. */
export const ENV_VARIABLES = Object.freeze(Object.keys(envSchema.shape));

/** The service's settings, parsed once from the environment. */
export type Config = Readonly<{
  host: string;
  port: number;
  databaseUrl: string | undefined;
  databasePoolSize: number;
  /** Streaming replicas that serve data reads while healthy and within the lag limit. */
  databaseReadUrls: readonly string[];
  replicaMaxLagSeconds: number;
  pgliteDir: string;
  statementTimeoutSeconds: number;
  connectTimeoutSeconds: number;
  /** How long a streamed answer waits for a client that takes none of it before giving the client up. */
  stalledClientSeconds: number;
  apiKeys: readonly string[];
  cacheMaxAgeSeconds: number;
  corsOrigins: readonly string[];
  /** Cost units each key regains per minute; 0 turns the default limit off. */
  rateLimitPerMinute: number;
  /** Most cost units a key can spend at once (its bucket's size). */
  rateLimitBurst: number;
  /**
   * Refused keys one client address may present a minute before keys that would need a lookup get a
   * 429 instead; 0 turns the limit off.
   */
  refusedKeysPerMinute: number;
  /** Where rate-limit buckets are shared by every instance and worker; unset: each process keeps its own. */
  redisUrl: string | undefined;
  /** Live subscriptions one key may hold open at once; 0 turns subscriptions off. */
  subscriptionsPerKey: number;
  /** Live subscriptions this process holds open at once, all keys together. */
  subscriptionsMax: number;
  /** Memory for hot answers, in MB; 0 turns the response cache off. */
  responseCacheMb: number;
  graphiql: boolean;
  /** Loads of GraphiQL's page and its files one client address may make a minute; 0 turns the limit off. */
  graphiqlLoadsPerMinute: number;
  /** The chart page at /explore (independent of GraphiQL: it only needs the API). */
  explorer: boolean;
  /** `GET /metrics` (Prometheus): off, on for key holders, or public (for a scraper on a private network). */
  metrics: 'off' | 'on' | 'public';
  seedYears: number;
  /** How long a graceful shutdown waits for requests in flight. */
  shutdownGraceSeconds: number;
  /** Server processes sharing the port; more than one needs DATABASE_URL. */
  workers: number;
  /** The first wait before a failed webhook delivery is tried again; it doubles up to an hour. */
  hooksRetryBaseSeconds: number;
  /** How long after its events were committed a delivery that keeps failing is given up. */
  hooksFailAfterHours: number;
  /** Lets hooks deliver to private and loopback addresses and over plain http:// (development, tests). */
  hooksAllowPrivate: boolean;
  logLevel: z.infer<typeof envSchema>['LOG_LEVEL'];
}>;

/**
 * Reads the configuration from an environment. Empty variables count as unset.
 * Throws an Error naming every variable whose value is invalid and what was expected.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const present = Object.fromEntries(
    Object.entries(env).filter(([name, v]) => v !== undefined && v !== '' && name in envSchema.shape),
  );
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  if ((e.DATABASE_READ_URLS ?? []).length > 0 && e.DATABASE_URL === undefined) {
    throw new Error(
      'invalid configuration:\n  DATABASE_READ_URLS: replicas need DATABASE_URL, the primary they replicate',
    );
  }
  const workers = e.WORKERS === 'auto' ? availableParallelism() : e.WORKERS;
  if (workers !== 1 && e.DATABASE_URL === undefined) {
    throw new Error(
      'invalid configuration:\n  WORKERS: several workers need DATABASE_URL ' +
        '(the embedded store belongs to one process)',
    );
  }
  return Object.freeze({
    host: e.HOST,
    port: e.PORT,
    databaseUrl: e.DATABASE_URL,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    databaseReadUrls: Object.freeze(e.DATABASE_READ_URLS ?? []),
    replicaMaxLagSeconds: e.REPLICA_MAX_LAG_SECONDS,
    pgliteDir: e.PGLITE_DIR,
    statementTimeoutSeconds: e.STATEMENT_TIMEOUT_SECONDS,
    connectTimeoutSeconds: e.CONNECT_TIMEOUT_SECONDS,
    stalledClientSeconds: e.STALLED_CLIENT_SECONDS,
    apiKeys: Object.freeze(e.API_KEYS ?? []),
    cacheMaxAgeSeconds: e.CACHE_MAX_AGE_SECONDS,
    corsOrigins: Object.freeze(e.CORS_ORIGINS ?? []),
    rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE,
    rateLimitBurst: e.RATE_LIMIT_BURST,
    refusedKeysPerMinute: e.REFUSED_KEYS_PER_MINUTE,
    redisUrl: e.REDIS_URL,
    subscriptionsPerKey: e.SUBSCRIPTIONS_PER_KEY,
    subscriptionsMax: e.SUBSCRIPTIONS_MAX,
    responseCacheMb: e.RESPONSE_CACHE_MB,
    graphiql: e.GRAPHIQL,
    graphiqlLoadsPerMinute: e.GRAPHIQL_LOADS_PER_MINUTE,
    explorer: e.EXPLORER,
    metrics: e.METRICS,
    seedYears: e.SEED_YEARS,
    shutdownGraceSeconds: e.SHUTDOWN_GRACE_SECONDS,
    workers,
    hooksRetryBaseSeconds: e.HOOKS_RETRY_BASE_SECONDS,
    hooksFailAfterHours: e.HOOKS_FAIL_AFTER_HOURS,
    hooksAllowPrivate: e.HOOKS_ALLOW_PRIVATE,
    logLevel: e.LOG_LEVEL,
  });
}

// Private

/**
 * Whether `value` is written exactly as a browser sends it in `Origin`: http(s), lower-case host,
 * no default port, no path.
 */
function isOrigin(value: string): boolean {
  return URL.canParse(value) && /^https?:$/.test(new URL(value).protocol) && new URL(value).origin === value;
}
