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
import { readdirSync, readFileSync } from 'node:fs';
import { ensureBenchDatabase } from './bench-database.js';
import { cpuUs, floorPort, servicePort, startChild, type Child } from './processes.js';
import { SHAPES, targetsFor } from './shapes.js';

const SERVER_URL = process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const KEY = 'bench-key-not-secret-0123456789';
const N = Number(process.env.N ?? 3000);
const CONNECTIONS = Number(process.env.C ?? 8);
const WANTED = (process.env.TARGETS ?? 'floor,rest,graphql').split(',');

const db = await ensureBenchDatabase(SERVER_URL, (line) => process.stderr.write(`${line}\n`));
const env = { DATABASE_URL: db.url, LOG_LEVEL: 'info', PORT: '0', API_KEYS: KEY, RATE_LIMIT_PER_MINUTE: '0', RESPONSE_CACHE_MB: '0' };
const floor = await startChild('test/bench/floor-server.ts', env, floorPort);
const service = await startChild('src/main.ts', env, servicePort);
try {
  const shape = SHAPES.find((s) => s.name === (process.env.SHAPE ?? '3x365'))!;
  const targets = targetsFor(shape, db.lastDay, db.projectIds, { floor: floor.port, service: service.port }, KEY).filter((t) => WANTED.includes(t.name));
  console.log(`${shape.name}, ${CONNECTIONS} connections, ${N} requests per row; CPU µs per request`);
  console.log('target    main  helpers  postgres  loadgen   total  non-2xx');
  for (let round = 0; round < Number(process.env.ROUNDS ?? 2); round += 1) {
    for (const target of targets) {
      const child: Child = target.name === 'floor' ? floor : service;
      const pid = child.process.pid!;
      const load = (amount: number) => autocannon({ url: target.url, method: target.method, headers: target.headers, body: target.body, connections: CONNECTIONS, amount });
      await load(300); // warm
      const before = { main: cpuUs(`/proc/${pid}/task/${pid}/stat`), all: cpuUs(`/proc/${pid}/stat`), pg: postgresCpuUs(), gen: process.cpuUsage() };
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

// Private

/** CPU time of every PostgreSQL process on the machine, in µs. */
function postgresCpuUs(): number {
  let total = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres') total += cpuUs(`/proc/${pid}/stat`);
    } catch {
      // the process ended between two reads
    }
  }
  return total;
}
