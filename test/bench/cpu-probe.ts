/**
 * `npx tsx test/bench/cpu-probe.ts`: CPU time per request, by process, for the floor, REST
 * and GraphQL on one shape (3x365 unless SHAPE says otherwise). Requests per second on two
 * shared cores swing with whatever else the machine does; the CPU each request costs the
 * serving process (its main thread and V8's helper threads apart), PostgreSQL and the load
 * generator moves much less, and says where a gap comes from.
 *
 * Environment: SHAPE (default 3x365), N requests per measurement (3000), ROUNDS (2),
 * C connections (8), TARGETS (floor,rest,graphql). Uses the bench database (bench-database.ts).
 */
import autocannon from 'autocannon';
import { BENCH_KEY, BENCH_SERVER_URL, benchServiceEnv, ensureBenchDatabase } from './bench-database.js';
import { cpuUs, postgresCpuUs, servicePort, startChild, startFloor, type Child } from './processes.js';
import { SHAPES, targetsFor } from './shapes.js';

const N = Number(process.env.N ?? 3000);
const CONNECTIONS = Number(process.env.C ?? 8);
const WANTED = (process.env.TARGETS ?? 'floor,rest,graphql').split(',');

const db = await ensureBenchDatabase(BENCH_SERVER_URL, (line) => process.stderr.write(`${line}\n`));
const env = benchServiceEnv(db);
const floor = await startFloor(env, false);
const service = await startChild('src/main.ts', env, servicePort);
try {
  const shape = SHAPES.find((s) => s.name === (process.env.SHAPE ?? '3x365'))!;
  const targets = targetsFor(
    shape,
    db.lastDay,
    db.projectIds,
    { floor: floor.port, service: service.port },
    BENCH_KEY,
  ).filter((t) => WANTED.includes(t.name));
  console.log(`${shape.name}, ${CONNECTIONS} connections, ${N} requests per row; CPU µs per request`);
  console.log('target    main  helpers  postgres  loadgen   total  non-2xx');
  for (let round = 0; round < Number(process.env.ROUNDS ?? 2); round += 1) {
    for (const target of targets) {
      const child: Child = target.name === 'floor' ? floor : service;
      const pid = child.process.pid!;
      const load = (amount: number) =>
        autocannon({
          url: target.url,
          method: target.method,
          headers: target.headers,
          body: target.body,
          connections: CONNECTIONS,
          amount,
        });
      await load(300); // warm
      const before = {
        main: cpuUs(`/proc/${pid}/task/${pid}/stat`),
        all: cpuUs(`/proc/${pid}/stat`),
        pg: postgresCpuUs(),
        gen: process.cpuUsage(),
      };
      const result = await load(N);
      const gen = process.cpuUsage(before.gen);
      const main = (cpuUs(`/proc/${pid}/task/${pid}/stat`) - before.main) / N;
      const helpers = (cpuUs(`/proc/${pid}/stat`) - before.all) / N - main;
      const pg = (postgresCpuUs() - before.pg) / N;
      const loadgen = (gen.user + gen.system) / N;
      const cells = [main, helpers, pg, loadgen, main + helpers + pg + loadgen].map((v) => v.toFixed(0).padStart(7));
      console.log(`${target.name.padEnd(8)} ${cells.join('  ')}  ${result.non2xx}`);
    }
  }
} finally {
  await Promise.all([floor.stop(), service.stop()]);
}
