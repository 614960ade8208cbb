/**
 * `npx tsx test/bench/setting-probe.ts`: what a session setting costs PostgreSQL, with no
 * HTTP and no service: two pools of C connections in this process run the 3x365 REST
 * statement as fast as they can, in turn, in paired slices of SLICE_MS (a b, b a, …).
 * Pool b's connections carry SETTINGS (URL query parameters, e.g.
 * `statement_timeout=60000`); pool a's carry none. Prints per block the statements per
 * second of b over a and PostgreSQL's CPU µs per statement for each; with SETTINGS empty
 * it is the method's own error.
 *
 * Environment: SETTINGS (statement_timeout=60000), C (8), BLOCKS (5), PAIRS (20), SLICE_MS (250).
 */
import postgres from 'postgres';
import { CATALOG } from '../../src/catalog/load-catalog.js';
import { fromEpochDay, toEpochDay } from '../../src/dates.js';
import { seriesStatement } from '../../src/series/series-sql.js';
import { BENCH_SERVER_URL, ensureBenchDatabase } from './bench-database.js';
import { median, postgresCpuUs } from './processes.js';
import { SHAPES } from './shapes.js';

const SETTINGS = process.env.SETTINGS ?? 'statement_timeout=60000';
const CONNECTIONS = Number(process.env.C ?? 8);
const BLOCKS = Number(process.env.BLOCKS ?? 5);
const PAIRS = Number(process.env.PAIRS ?? 20);
const SLICE_MS = Number(process.env.SLICE_MS ?? 250);

const db = await ensureBenchDatabase(BENCH_SERVER_URL, (line) => process.stderr.write(`${line}\n`));
const shape = SHAPES.find((s) => s.name === '3x365')!;
const metric = CATALOG.byName.get('etf-aum-change-pct')!;
const OPTIONS = { interval: 'day', aggregation: 'avg', fill: 'none', transform: null, window: null } as const;
const { text, parameters } = seriesStatement({ layout: 'rest', options: OPTIONS, extraFields: [], asOf: false });
const query = {
  projectIds: db.projectIds.slice(0, shape.projects),
  slugs: metric.projects.slice(0, shape.projects),
  from: fromEpochDay(toEpochDay(db.lastDay) - shape.days + 1),
  to: db.lastDay,
  metric: '',
  options: OPTIONS,
  asOf: null,
};
const params = parameters(query).map((p) => (Array.isArray(p) ? `{${p.join(',')}}` : p)) as never[];

console.log(`3x365 statement, ${CONNECTIONS} connections per pool, b: ${SETTINGS === '' ? '(none)' : SETTINGS}; ${BLOCKS} blocks of ${PAIRS} pairs of ${SLICE_MS} ms slices`);
const ratios: number[] = [];
for (let block = 1; block <= BLOCKS; block += 1) {
  const a = postgres(db.url, { max: CONNECTIONS, prepare: true, fetch_types: false, idle_timeout: 0, onnotice: () => {} });
  const b = postgres(`${db.url}${db.url.includes('?') ? '&' : '?'}${SETTINGS}`, { max: CONNECTIONS, prepare: true, fetch_types: false, idle_timeout: 0, onnotice: () => {} });
  const totals = { a: { n: 0, us: 0, ms: 0 }, b: { n: 0, us: 0, ms: 0 } };
  for (const pool of [a, b]) await slice(pool, 1000); // warm: every connection open and prepared
  for (let pair = 0; pair < PAIRS; pair += 1) {
    for (const name of pair % 2 === 0 ? (['a', 'b'] as const) : (['b', 'a'] as const)) {
      const cpu = postgresCpuUs();
      const started = performance.now();
      totals[name].n += await slice(name === 'a' ? a : b, SLICE_MS);
      totals[name].ms += performance.now() - started;
      totals[name].us += postgresCpuUs() - cpu;
    }
  }
  await a.end();
  await b.end();
  const rate = (t: { n: number; ms: number }) => (t.n / t.ms) * 1000;
  const ratio = rate(totals.b) / rate(totals.a);
  ratios.push(ratio);
  console.log(`  block ${block}: b ${ratio.toFixed(3)} × a (${rate(totals.b).toFixed(0)} against ${rate(totals.a).toFixed(0)}/s); PostgreSQL ${(totals.b.us / totals.b.n).toFixed(0)} against ${(totals.a.us / totals.a.n).toFixed(0)} µs/statement`);
}
console.log(`b × a median ${median(ratios).toFixed(3)} (blocks ${Math.min(...ratios).toFixed(3)}-${Math.max(...ratios).toFixed(3)})`);

/** Statements completed by C loops running the statement back to back for `ms`. */
async function slice(pool: postgres.Sql, ms: number): Promise<number> {
  const until = performance.now() + ms;
  let done = 0;
  await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
    while (performance.now() < until) {
      const rows = await pool.unsafe(text, params, { prepare: true }).raw();
      if (rows.length !== shape.projects) throw new Error(`expected ${shape.projects} rows, got ${rows.length}`);
      done += 1;
    }
  }));
  return done;
}
