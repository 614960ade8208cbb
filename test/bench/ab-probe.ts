/**
 * `npx tsx test/bench/ab-probe.ts`: the 3x365 REST request against the floor and one or
 * more builds of the service, in alternating rounds, each round starting one target
 * further on; prints per round and as medians the requests per second, the ratio to the
 * floor and the CPU µs per request of each process's main thread and of the whole process,
 * of every PostgreSQL process and of the load generator (this process).
 * Unlike `npm run bench`, the services serve REST alone unless GRAPHQL=1 sends GraphQL
 * load between rounds (docs/benchmarks.md, "REST alone and beside GraphQL").
 *
 * To compare a change with main: `git worktree add /tmp/base main`, link node_modules
 * there, `npm run build` in it, then BUILDS=/tmp/base/dist/src/main.js,src/main.ts.
 *
 * Environment: BUILDS (default src/main.ts), C connections (8), ROUNDS (8), SECONDS per
 * round (4), GRAPHQL (0). Uses the bench database (bench-database.ts).
 */
import autocannon from 'autocannon';
import { BENCH_KEY, BENCH_SERVER_URL, benchServiceEnv, ensureBenchDatabase } from './bench-database.js';
import { cpuUs, median, postgresCpuUs, servicePort, startChild, startFloor, type Child } from './processes.js';
import { SHAPES, targetsFor, type Target } from './shapes.js';

const BUILDS = (process.env.BUILDS ?? 'src/main.ts').split(',');
const CONNECTIONS = Number(process.env.C ?? 8);
const ROUNDS = Number(process.env.ROUNDS ?? 8);
const SECONDS = Number(process.env.SECONDS ?? 4);
const GRAPHQL = process.env.GRAPHQL === '1';

const db = await ensureBenchDatabase(BENCH_SERVER_URL, (line) => process.stderr.write(`${line}\n`));
const env = benchServiceEnv(db);
const shape = SHAPES.find((s) => s.name === '3x365')!;
// With GraphQL load the services' database sessions run the GraphQL statement too; so do the floor's.
const floor = await startFloor(env, GRAPHQL);
const services: Child[] = [];
try {
  for (const build of BUILDS) services.push(await startChild(build, env, servicePort));
  /** Per round: requests per second, and CPU µs per request of the target's main thread, its whole process, PostgreSQL and the load generator. */
  interface Figures { rps: number[]; main: number[]; all: number[]; postgres: number[]; loadgen: number[] }
  interface Row extends Figures { name: string; child: Child; target: Target; graphql?: Target }
  const noFigures = (): Figures => ({ rps: [], main: [], all: [], postgres: [], loadgen: [] });
  const rows: Row[] = [
    { name: 'floor', child: floor, target: targetsFor(shape, db.lastDay, db.projectIds, { floor: floor.port, service: 0 }, BENCH_KEY)[0]!, ...noFigures() },
    ...services.map((child, i): Row => {
      const [, rest, graphql] = targetsFor(shape, db.lastDay, db.projectIds, { floor: floor.port, service: child.port }, BENCH_KEY);
      return { name: `${i}:${BUILDS[i]}`, child, target: rest!, graphql, ...noFigures() };
    }),
  ];
  const load = (target: Target, options: { duration?: number; amount?: number }) =>
    autocannon({ url: target.url, method: target.method, headers: target.headers, body: target.body, connections: CONNECTIONS, ...options });
  for (const row of rows) await load(row.target, { amount: 1500 }); // warm
  console.log(`3x365 REST at ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s${GRAPHQL ? ', GraphQL load between rounds' : ''}`);
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const row of rows.map((_, i) => rows[(i + round) % rows.length]!)) {
      const pid = row.child.process.pid!;
      const before = { main: cpuUs(`/proc/${pid}/task/${pid}/stat`), all: cpuUs(`/proc/${pid}/stat`), postgres: postgresCpuUs(), loadgen: process.cpuUsage() };
      const result = await load(row.target, { duration: SECONDS });
      if (result.non2xx > 0) throw new Error(`${row.name} answered ${result.non2xx} non-2xx`);
      row.rps.push(result.requests.average);
      row.main.push((cpuUs(`/proc/${pid}/task/${pid}/stat`) - before.main) / result.requests.total);
      row.all.push((cpuUs(`/proc/${pid}/stat`) - before.all) / result.requests.total);
      row.postgres.push((postgresCpuUs() - before.postgres) / result.requests.total);
      const loadgen = process.cpuUsage(before.loadgen); // this process: autocannon
      row.loadgen.push((loadgen.user + loadgen.system) / result.requests.total);
      if (GRAPHQL && row.graphql !== undefined) await load(row.graphql, { duration: SECONDS });
    }
    console.log(`  round ${round + 1}: ${rows.map((r) => `${r.name} ${r.rps.at(-1)!.toFixed(0)} req/s ${r.main.at(-1)!.toFixed(0)}/${r.all.at(-1)!.toFixed(0)} µs`).join(', ')}`);
  }
  const floorRps = median(rows[0]!.rps);
  console.log('target                          req/s  ratio  main µs  process µs  postgres µs  loadgen µs');
  for (const row of rows) {
    console.log(`${row.name.padEnd(30)} ${median(row.rps).toFixed(0).padStart(6)} ${(median(row.rps) / floorRps).toFixed(3).padStart(6)} ${median(row.main).toFixed(0).padStart(8)} ${median(row.all).toFixed(0).padStart(11)} ${median(row.postgres).toFixed(0).padStart(12)} ${median(row.loadgen).toFixed(0).padStart(11)}`);
  }
} finally {
  await Promise.all([floor.stop(), ...services.map((s) => s.stop())]);
}
