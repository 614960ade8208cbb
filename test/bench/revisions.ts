import autocannon from 'autocannon';
import postgres from 'postgres';
import { pathToFileURL } from 'node:url';
import { CATALOG } from '../../src/catalog/load-catalog.js';
import { fromEpochDay, toEpochDay } from '../../src/dates.js';
import { migrate } from '../../src/db/migrate.js';
import { openPostgres } from '../../src/db/open-postgres.js';
import { syncCatalog } from '../../src/db/sync-catalog.js';
import { upsertPoints, type PointRow } from '../../src/db/write-points.js';
import { readProfile } from '../../src/revisions/read-profile.js';
import { BENCH_KEY, BENCH_SERVER_URL } from './bench-database.js';
import { servicePort, startChild } from './processes.js';
import { BENCH_METRIC } from './shapes.js';

/** The revision history's last day and length: every project of the bench metric, one year. */
const LAST_DAY = '2026-06-30';
const DAYS = 365;

/**
 * Vintage, triangle and profile reads on a year of the bench metric's 76 issuers with a
 * revision history, in a database of its own (metrics_bench_revisions, made once): each day
 * first written at 01:00 the day after, every third revised a day later, every seventh
 * again five days after that. Rows, 8 connections: the plain read of all 76 × 365 beside
 * `known_after` (K = 1) and `first_release`; a 90-day triangle of one issuer (5 lags);
 * the kept profile; and the profile computed cold (the median of 5 direct computations).
 * Reported, not gating.
 */
export async function measureRevisions(
  serverUrl: string,
  env: Record<string, string>,
  log: (line: string) => void,
): Promise<string[]> {
  const url = await ensureRevisionsDatabase(serverUrl, log);
  const store = openPostgres({ url, poolSize: 1, statementTimeoutSeconds: 600, connectTimeoutSeconds: 10 });
  const metric = CATALOG.byName.get(BENCH_METRIC)!;
  let coldMs: number[] = [];
  try {
    const ids = (
      await store.query<{ id: number }>(
        'select p.id from project p join metric m on m.id = p.metric_id where m.name = $1 order by p.position',
        [BENCH_METRIC],
      )
    ).map((r) => Number(r.id));
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      await readProfile(store, ids, 180);
      coldMs.push(performance.now() - started);
    }
    coldMs = coldMs.sort((a, b) => a - b);
  } finally {
    await store.close();
  }
  const service = await startChild('src/main.ts', { ...env, DATABASE_URL: url }, servicePort);
  try {
    const from = fromEpochDay(toEpochDay(LAST_DAY) - DAYS + 1);
    const series = `/v1/metrics/${BENCH_METRIC}?project=${metric.projects.join(',')}&start_date=${from}&end_date=${LAST_DAY}`;
    const paths = {
      plain: series,
      'known_after K=1': `${series}&vintage=known_after&lag_days=1`,
      first_release: `${series}&vintage=first_release`,
      'triangle 90 days': `/v1/revisions/${BENCH_METRIC}?project=${metric.projects[0]}&start_date=${fromEpochDay(toEpochDay(LAST_DAY) - 89)}&end_date=${LAST_DAY}&lags=0,1,3,7,30`,
      'profile (kept)': `/v1/metrics/${BENCH_METRIC}/profile`,
    };
    const lines: string[] = [];
    for (const [name, path] of Object.entries(paths)) {
      const target = `http://127.0.0.1:${service.port}${path}`;
      const check = await fetch(target, { headers: { 'x-api-key': BENCH_KEY } });
      const bytes = (await check.arrayBuffer()).byteLength;
      if (check.status !== 200) throw new Error(`${name} answered ${check.status}`);
      const result = await autocannon({
        url: target,
        headers: { 'x-api-key': BENCH_KEY },
        connections: 8,
        duration: 5,
      });
      lines.push(
        `revisions, ${name}, 8 connections: ${result.requests.average.toFixed(0)} req/s, p50 ` +
          `${result.latency.p50} ms, p99 ${result.latency.p99} ms, ${bytes} bytes, non-2xx ${result.non2xx}`,
      );
      log(lines.at(-1)!);
    }
    lines.push(
      `revisions, profile computed cold (76 issuers, 180 days, direct): median ${coldMs[2]!.toFixed(1)} ms ` +
        `(min ${coldMs[0]!.toFixed(1)}, max ${coldMs[4]!.toFixed(1)})`,
    );
    log(lines.at(-1)!);
    return lines;
  } finally {
    await service.stop();
  }
}

// Private

async function ensureRevisionsDatabase(serverUrl: string, log: (line: string) => void): Promise<string> {
  const url = new URL(serverUrl);
  url.pathname = '/metrics_bench_revisions';
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  const [exists] = await admin`select 1 from pg_database where datname = 'metrics_bench_revisions'`;
  if (exists === undefined) await admin.unsafe('create database metrics_bench_revisions');
  await admin.end();
  const store = openPostgres({
    url: url.toString(),
    poolSize: 1,
    statementTimeoutSeconds: 600,
    connectTimeoutSeconds: 10,
  });
  try {
    await migrate(store);
    await syncCatalog(store, CATALOG);
    const [held] = await store.query<{ n: number }>('select count(*)::int as n from point');
    if (held!.n > 0) return url.toString();
    log('writing a year of revisions into metrics_bench_revisions (once; later runs reuse them)…');
    const ids = (
      await store.query<{ id: number }>(
        'select p.id from project p join metric m on m.id = p.metric_id where m.name = $1 order by p.position',
        [BENCH_METRIC],
      )
    ).map((r) => Number(r.id));
    const writes = new Map<number, PointRow[]>();
    const add = (at: number, day: string, value: (position: number) => number) =>
      writes.set(at, [
        ...(writes.get(at) ?? []),
        ...ids.map((projectId, position) => ({ projectId, day, value: value(position), extra: null })),
      ]);
    const first = toEpochDay(LAST_DAY) - DAYS + 1;
    for (let i = 0; i < DAYS; i++) {
      const midnight = (first + i) * 86_400_000;
      const day = fromEpochDay(first + i);
      add(midnight + 25 * 3_600_000, day, (p) => 1 + ((p * 7 + i) % 50) / 10);
      if (i % 3 === 0) add(midnight + 54 * 3_600_000, day, (p) => 1.05 + ((p * 7 + i) % 50) / 10);
      if (i % 7 === 0) add(midnight + 174 * 3_600_000, day, (p) => 1.09 + ((p * 7 + i) % 50) / 10);
    }
    for (const at of [...writes.keys()].sort((a, b) => a - b)) {
      await store.transaction(async (tx) => {
        await tx.query(`select set_config('metrics.write_time', $1, true)`, [new Date(at).toISOString()]);
        await upsertPoints(tx, writes.get(at)!);
      });
    }
    await store.exec('vacuum analyze point');
    await store.exec('vacuum analyze point_history');
    return url.toString();
  } finally {
    await store.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const env = { LOG_LEVEL: 'info', PORT: '0', API_KEYS: BENCH_KEY, RATE_LIMIT_PER_MINUTE: '0', RESPONSE_CACHE_MB: '0' };
  for (const line of await measureRevisions(BENCH_SERVER_URL, env, (l) => process.stderr.write(`${l}\n`)))
    console.log(line);
}
