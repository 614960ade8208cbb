/**
 * `npx tsx test/bench/session-history-probe.ts`: PostgreSQL alone (postgres.js, no service,
 * no HTTP) runs the bench's 3x365 REST statement on two pools of 8 sessions, one of which
 * first ran another statement ten times per session, in alternating rounds, and prints
 * PostgreSQL's CPU per REST statement in each; two fresh pools per other statement. It
 * shows that what a session ran before changes what the REST statement costs in it by a
 * few per cent either way (docs/benchmarks.md, "What a session ran before"), which is why
 * the bench's floor runs the GraphQL statement too when the service answers GraphQL.
 *
 * Environment: ROUNDS (6) alternating rounds of 5,000 REST statements per pool.
 */
import postgres from 'postgres';
import { seriesStatement, type SeriesShape } from '../../src/series/series-sql.js';
import { BENCH_SERVER_URL, ensureBenchDatabase } from './bench-database.js';
import { median, postgresCpuUs } from './processes.js';
import { BENCH_METRIC, SHAPES } from './shapes.js';
import { CATALOG } from '../../src/catalog/load-catalog.js';
import { fromEpochDay, toEpochDay } from '../../src/dates.js';

const ROUNDS = Number(process.env.ROUNDS ?? 6);
const SESSIONS = 8;
const STATEMENTS_PER_ROUND = 5_000;

const db = await ensureBenchDatabase(BENCH_SERVER_URL, (line) => process.stderr.write(`${line}\n`));
const DAY = { interval: 'day', aggregation: 'avg', fill: 'none', transform: null, window: null } as const;
// The bench's 3x365 request, as test/bench/shapes.ts builds it.
const shape = SHAPES.find((s) => s.name === '3x365')!;
const to = db.lastDay;
const from = fromEpochDay(toEpochDay(to) - shape.days + 1);
const slugs = CATALOG.byName.get(BENCH_METRIC)!.projects.slice(0, shape.projects);
const query = (options: SeriesShape['options']) => ({ projectIds: db.projectIds.slice(0, shape.projects), slugs, from, to, metric: BENCH_METRIC, options, asOf: null });

/** A statement and its parameters as the service sends them (arrays as literals). */
function statement(shape: SeriesShape): { text: string; params: unknown[] } {
  const { text, parameters } = seriesStatement(shape);
  return { text, params: parameters(query(shape.options)).map((p) => (Array.isArray(p) ? `{${p.join(',')}}` : p)) };
}

const REST = statement({ layout: 'rest', options: DAY, extraFields: [], asOf: false });
const BEFORE: Record<string, ReturnType<typeof statement> | undefined> = {
  'nothing else': undefined,
  'the same statement, other projects': { ...REST, params: REST.params.map((p, i) => (i === 0 ? `{${db.projectIds.slice(3, 6).join(',')}}` : p)) },
  'the GraphQL statement (date, value)': statement({ layout: { graphql: ['date', 'value'] }, options: DAY, extraFields: [], asOf: false }),
  'the REST statement by month': statement({ layout: 'rest', options: { ...DAY, interval: 'month', aggregation: 'last' }, extraFields: [], asOf: false }),
};

/** PostgreSQL's CPU µs per statement over `count` runs of `s` on the pool's sessions, `SESSIONS` at a time. */
async function cpuPerStatement(sql: postgres.Sql, s: { text: string; params: unknown[] }, count: number): Promise<number> {
  const before = postgresCpuUs();
  let started = 0;
  await Promise.all(Array.from({ length: SESSIONS }, async () => {
    while (started < count) {
      started += 1;
      await sql.unsafe(s.text, s.params as never[], { prepare: true }).raw();
    }
  }));
  return (postgresCpuUs() - before) / count;
}

console.log(`PostgreSQL CPU µs per 3x365 REST statement on ${SESSIONS} sessions that ran it alone and on ${SESSIONS} that also ran another statement; ${ROUNDS} alternating rounds of ${STATEMENTS_PER_ROUND}, medians`);
console.log('the other sessions also ran                 alone   also   change');
for (const [name, other] of Object.entries(BEFORE)) {
  const open = () => postgres(db.url, { max: SESSIONS, prepare: true, fetch_types: false, onnotice: () => {} });
  const [alone, also] = [open(), open()];
  try {
    for (const sql of [alone, also]) await cpuPerStatement(sql, REST, 2_000); // every session opened, the statement prepared
    if (other !== undefined) await cpuPerStatement(also, other, SESSIONS * 10);
    const figures: [number[], number[]] = [[], []];
    for (let round = 0; round < ROUNDS; round += 1) {
      // Alternating, each round starting with the other pool, so drift over time falls on both.
      for (const which of round % 2 === 0 ? [0, 1] : [1, 0]) figures[which]!.push(await cpuPerStatement(which === 0 ? alone : also, REST, STATEMENTS_PER_ROUND));
    }
    const [a, b] = [median(figures[0]), median(figures[1])];
    console.log(`${name.padEnd(42)} ${a.toFixed(0).padStart(6)} ${b.toFixed(0).padStart(6)} ${`${b >= a ? '+' : ''}${((b / a - 1) * 100).toFixed(1)}%`.padStart(8)}`);
  } finally {
    await Promise.all([alone.end(), also.end()]);
  }
}
