import { availableParallelism } from 'node:os';
import { z } from 'zod';

const onOff = z.enum(['on', 'off']).transform((v) => v === 'on');
const commaList = z.string().transform((v) => v.split(',').map((s) => s.trim()).filter((s) => s !== ''));

const envSchema = z.object({
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  PGLITE_DIR: z.string().min(1).default('.data/pglite'),
  STATEMENT_TIMEOUT_SECONDS: z.coerce.number().positive().max(600).default(5),
  CONNECT_TIMEOUT_SECONDS: z.coerce.number().positive().max(120).default(5),
  API_KEYS: commaList.default([]),
  CACHE_MAX_AGE_SECONDS: z.coerce.number().int().min(0).default(60),
  CORS_ORIGINS: commaList.default([]),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(600),
  RATE_LIMIT_BURST: z.coerce.number().int().min(1).default(1200),
  GRAPHIQL: onOff.default(true),
  SHUTDOWN_GRACE_SECONDS: z.coerce.number().min(0).max(600).default(10),
  SEED_YEARS: z.coerce.number().int().min(1).max(30).default(3),
  WORKERS: z.union([z.literal('auto'), z.coerce.number().int().min(1).max(64)]).default(1),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  NODE_ENV: z.string().default('development'),
});

/** The service's settings, parsed once from the environment. */
export type Config = Readonly<{
  host: string;
  port: number;
  databaseUrl: string | undefined;
  databasePoolSize: number;
  pgliteDir: string;
  statementTimeoutSeconds: number;
  connectTimeoutSeconds: number;
  apiKeys: readonly string[];
  cacheMaxAgeSeconds: number;
  corsOrigins: readonly string[];
  /** Cost units each key regains per minute; 0 turns the default limit off. */
  rateLimitPerMinute: number;
  /** Most cost units a key can spend at once (its bucket's size). */
  rateLimitBurst: number;
  graphiql: boolean;
  seedYears: number;
  /** How long a graceful shutdown waits for requests in flight. */
  shutdownGraceSeconds: number;
  /** Server processes sharing the port; more than one needs DATABASE_URL. */
  workers: number;
  logLevel: z.infer<typeof envSchema>['LOG_LEVEL'];
  production: boolean;
}>;

/**
 * Reads the configuration from an environment. Empty variables count as unset.
 * Throws an Error naming every variable whose value is invalid and what was expected.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  if (e.WORKERS !== 1 && e.DATABASE_URL === undefined) {
    throw new Error('invalid configuration:\n  WORKERS: several workers need DATABASE_URL (the embedded store belongs to one process)');
  }
  return Object.freeze({
    host: e.HOST,
    port: e.PORT,
    databaseUrl: e.DATABASE_URL,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    pgliteDir: e.PGLITE_DIR,
    statementTimeoutSeconds: e.STATEMENT_TIMEOUT_SECONDS,
    connectTimeoutSeconds: e.CONNECT_TIMEOUT_SECONDS,
    apiKeys: Object.freeze(e.API_KEYS),
    cacheMaxAgeSeconds: e.CACHE_MAX_AGE_SECONDS,
    corsOrigins: Object.freeze(e.CORS_ORIGINS),
    rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE,
    rateLimitBurst: e.RATE_LIMIT_BURST,
    graphiql: e.GRAPHIQL,
    seedYears: e.SEED_YEARS,
    shutdownGraceSeconds: e.SHUTDOWN_GRACE_SECONDS,
    workers: e.WORKERS === 'auto' ? availableParallelism() : e.WORKERS,
    logLevel: e.LOG_LEVEL,
    production: e.NODE_ENV === 'production',
  });
}
