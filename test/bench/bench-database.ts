import postgres from 'postgres';
import { CATALOG } from '../../src/catalog/load-catalog.js';
import { fromEpochDay, todayEpochDay } from '../../src/dates.js';
import { migrate } from '../../src/db/migrate.js';
import { openPostgres } from '../../src/db/open-postgres.js';
import { seedDatabase } from '../../src/seed/seed-database.js';
import { BENCH_METRIC } from './shapes.js';

export const BENCH_YEARS = 10;

/** The PostgreSQL server the bench database lives beside. */
export const BENCH_SERVER_URL =
  process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** The key every bench service accepts (API_KEYS) and every keyed bench request sends. */
export const BENCH_KEY = 'bench-key-not-secret-0123456789';

/** A benched service's environment: the bench database, the bench key, the limit lifted and the response cache off. */
export function benchServiceEnv(db: BenchDatabase): Record<string, string> {
  return {
    DATABASE_URL: db.url,
    LOG_LEVEL: 'info',
    PORT: '0',
    API_KEYS: BENCH_KEY,
    RATE_LIMIT_PER_MINUTE: '0',
    RESPONSE_CACHE_MB: '0',
  };
}

export interface BenchDatabase {
  url: string;
  /** The last seeded day; request ranges end here so every shape has full data. */
  lastDay: string;
  /** Project ids of the bench metric in catalog order, for the floor server. */
  projectIds: number[];
}

/**
 * Creates (once) a database beside the server's own and fills it with ten years of sample
 * data for every metric and slug. A later run finds it and reuses it.
 */
export async function ensureBenchDatabase(serverUrl: string, log: (line: string) => void): Promise<BenchDatabase> {
  const url = new URL(serverUrl);
  url.pathname = '/metrics_bench';
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  const [exists] = await admin`select 1 from pg_database where datname = 'metrics_bench'`;
  if (exists === undefined) await admin.unsafe('create database metrics_bench');
  await admin.end();

  const store = openPostgres({
    url: url.toString(),
    poolSize: 2,
    statementTimeoutSeconds: 600,
    connectTimeoutSeconds: 10,
  });
  try {
    await migrate(store);
    await store.exec('create table if not exists bench_seed (years integer not null, last_day date not null)');
    const [seeded] = await store.query<{ years: number; lastDay: string }>(
      'select years, last_day::text as "lastDay" from bench_seed',
    );
    const projectIds = async () =>
      (
        await store.query<{ id: number }>(
          `select p.id from project p join metric m on m.id = p.metric_id where m.name = $1 order by p.position`,
          [BENCH_METRIC],
        )
      ).map((r) => r.id);
    if (seeded !== undefined && seeded.years >= BENCH_YEARS)
      return { url: url.toString(), lastDay: seeded.lastDay, projectIds: await projectIds() };
    const lastDay = todayEpochDay();
    const started = Date.now();
    log(`seeding ${BENCH_YEARS} years of sample data into metrics_bench (once; later runs reuse it)…`);
    await seedDatabase(store, CATALOG, { years: BENCH_YEARS, lastDay });
    await store.exec('vacuum analyze point');
    await store.query('delete from bench_seed');
    await store.query('insert into bench_seed (years, last_day) values ($1, $2)', [BENCH_YEARS, fromEpochDay(lastDay)]);
    log(`seeded in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    return { url: url.toString(), lastDay: fromEpochDay(lastDay), projectIds: await projectIds() };
  } finally {
    await store.close();
  }
}
