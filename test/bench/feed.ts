import autocannon from 'autocannon';
import postgres from 'postgres';
import { migrate } from '../../src/db/migrate.js';
import { openPostgres } from '../../src/db/open-postgres.js';
import { syncCatalog } from '../../src/db/sync-catalog.js';
import { CATALOG } from '../../src/catalog/load-catalog.js';
import { BENCH_KEY } from './bench-database.js';
import { servicePort, startChild } from './processes.js';

/** Changes in the feed bench's log: enough that a walk of the whole log shows (about 0.25 s a page). */
export const FEED_CHANGES = 1_000_000;
/** Entries a full page asks for. */
const PAGE = 1_000;
/** The log's first write; one write a second after it, a thousand changes each. */
const LOG_START = Date.parse('2026-01-01T00:00:00Z');
const PER_WRITE = 1_000;

/**
 * The changes feed on a log of {@link FEED_CHANGES} entries, in a database of its own
 * (metrics_bench_feed, made once): a full page from the log's start, one from its middle and
 * one whose `since` is after every write, 8 connections each. A page costs its entries, not
 * the log before them: the figure printed is the slower of the last two's p50 over the first's.
 */
export async function measureFeed(
  serverUrl: string,
  env: Record<string, string>,
  log: (line: string) => void,
): Promise<string> {
  const url = await ensureFeedDatabase(serverUrl, log);
  const service = await startChild('src/main.ts', { ...env, DATABASE_URL: url }, servicePort);
  try {
    const at = (ms: number) => encodeURIComponent(new Date(ms).toISOString());
    const lastWrite = LOG_START + (FEED_CHANGES / PER_WRITE - 1) * 1000;
    const pages = {
      start: `/v1/changes?since=${at(LOG_START)}&limit=${PAGE}`,
      middle: `/v1/changes?since=${at(LOG_START + (lastWrite - LOG_START) / 2)}&limit=${PAGE}`,
      empty: `/v1/changes?since=${at(lastWrite + 1000)}&limit=${PAGE}`,
    };
    const results: Record<string, autocannon.Result> = {};
    for (const [name, path] of Object.entries(pages)) {
      const target = `http://127.0.0.1:${service.port}${path}`;
      const check = await fetch(target, { headers: { 'x-api-key': BENCH_KEY } });
      const body = (await check.json()) as { changes: unknown[] };
      const expected = name === 'empty' ? 0 : PAGE;
      if (check.status !== 200 || body.changes.length !== expected) {
        throw new Error(`the ${name} feed page answered ${check.status} with ${body.changes.length} entries`);
      }
      results[name] = await autocannon({
        url: target,
        headers: { 'x-api-key': BENCH_KEY },
        connections: 8,
        duration: 4,
      });
    }
    const p50 = (name: string) => Math.max(results[name]!.latency.p50, 0.5);
    const line = (name: string) =>
      `${results[name]!.requests.average.toFixed(0)} req/s, p50 ${results[name]!.latency.p50} ms`;
    const worst = Math.max(p50('middle'), p50('empty')) / p50('start');
    const non2xx = Object.values(results).reduce((n, r) => n + r.non2xx, 0);
    return (
      `changes feed, ${FEED_CHANGES} changes, 8 connections: ${PAGE} entries from the log's start ` +
      `${line('start')}; from its middle ${line('middle')}; a page after every write ${line('empty')}; ` +
      `worst ÷ start p50 ${worst.toFixed(2)}, non-2xx ${non2xx}`
    );
  } finally {
    await service.stop();
  }
}

// Private

async function ensureFeedDatabase(serverUrl: string, log: (line: string) => void): Promise<string> {
  const url = new URL(serverUrl);
  url.pathname = '/metrics_bench_feed';
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  const [exists] = await admin`select 1 from pg_database where datname = 'metrics_bench_feed'`;
  if (exists === undefined) await admin.unsafe('create database metrics_bench_feed');
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
    const [logged] = await store.query<{ n: number }>('select count(*)::int as n from point_change');
    if (logged!.n === FEED_CHANGES) return url.toString();
    log(`writing ${FEED_CHANGES} changes into metrics_bench_feed (once; later runs reuse them)…`);
    const [project] = await store.query<{ id: number }>('select min(id)::int as id from project');
    await store.exec(`truncate point_change;
      insert into point_change (project_id, day, value, extra, written_at)
      select ${project!.id}, date '2020-01-01' + (i % 2000), i, null,
        timestamptz '${new Date(LOG_START).toISOString()}' + ((i - 1) / ${PER_WRITE}) * interval '1 second'
      from generate_series(1, ${FEED_CHANGES}) i order by i;
      analyze point_change`);
    return url.toString();
  } finally {
    await store.close();
  }
}
