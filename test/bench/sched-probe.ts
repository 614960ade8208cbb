/**
 * `npx tsx test/bench/sched-probe.ts`: what the 3x365 REST request costs the operating
 * system, for the floor and one or more builds of the service: how long the machine's
 * two cores sat idle, the CPU of the process's main thread and of its other threads,
 * the context switches (voluntary: the process waited; involuntary: it was preempted)
 * and the read and write system calls, all per request.
 *
 * Why: requests per second at 8 connections are not set by CPU alone. The service's main
 * thread is one serial stage between the load generator and PostgreSQL's backends, and
 * every extra wake-up of it (a log block handed to libuv's thread pool was one) cuts its
 * socket reads into smaller pieces and leaves the cores idle more often. Those costs show
 * here and hardly in a CPU profile (docs/benchmarks.md, "Log writes on the main thread").
 *
 * Environment: BUILDS (default src/main.ts), SECONDS per measurement (4), C connections
 * (8), ROUNDS (2): the targets alternate, each measured after 2,000 requests of warm-up.
 * Loads are timed, not counted: autocannon ends a counted load on its next one-second
 * tick, which would add up to a second of idle machine to the figures. Uses the bench
 * database (bench-database.ts).
 */
import autocannon from 'autocannon';
import { readFileSync } from 'node:fs';
import { BENCH_KEY, BENCH_SERVER_URL, benchServiceEnv, ensureBenchDatabase } from './bench-database.js';
import { machineCpuUs, postgresCpuUs, servicePort, startChild, startFloor, threadCpuUs, type Child } from './processes.js';
import { SHAPES, targetsFor, type Target } from './shapes.js';

const BUILDS = (process.env.BUILDS ?? 'src/main.ts').split(',');
const SECONDS = Number(process.env.SECONDS ?? 4);
const CONNECTIONS = Number(process.env.C ?? 8);
const ROUNDS = Number(process.env.ROUNDS ?? 2);

const db = await ensureBenchDatabase(BENCH_SERVER_URL, (line) => process.stderr.write(`${line}\n`));
const env = benchServiceEnv(db);
const shape = SHAPES.find((s) => s.name === '3x365')!;
const children: Child[] = [];
try {
  const floor = await startFloor(env, false);
  children.push(floor);
  const rows: { name: string; child: Child; target: Target }[] = [
    { name: 'floor', child: floor, target: targetsFor(shape, db.lastDay, db.projectIds, { floor: floor.port, service: 0 }, BENCH_KEY)[0]! },
  ];
  for (const build of BUILDS) {
    const child = await startChild(build, env, servicePort);
    children.push(child);
    rows.push({ name: build, child, target: targetsFor(shape, db.lastDay, db.projectIds, { floor: floor.port, service: child.port }, BENCH_KEY)[1]! });
  }
  const load = (target: Target, options: { amount?: number; duration?: number }) => autocannon({ url: target.url, method: target.method, headers: target.headers, body: target.body, connections: CONNECTIONS, ...options });
  console.log(`3x365 REST at ${CONNECTIONS} connections, ${SECONDS} s per row; per request: CPU µs, context switches, system calls`);
  console.log('target                             req/s  idle %  main µs  other µs  pg µs  loadgen  machine  vol cs  invol cs  reads  writes');
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const row of rows) {
      await load(row.target, { amount: 2000 });
      const pid = row.child.process.pid!;
      const before = { machine: machineCpuUs(), threads: threadCpuUs(pid), pg: postgresCpuUs(), gen: process.cpuUsage(), status: switches(pid), io: syscalls(pid), at: performance.now() };
      const result = await load(row.target, { duration: SECONDS });
      if (result.non2xx > 0) throw new Error(`${row.name} answered ${result.non2xx} non-2xx`);
      const seconds = (performance.now() - before.at) / 1000;
      const machine = machineCpuUs();
      const threads = threadCpuUs(pid);
      const [pg, gen] = [postgresCpuUs(), process.cpuUsage(before.gen)];
      const [status, io] = [switches(pid), syscalls(pid)];
      const n = result.requests.total;
      const per = (a: number, b: number) => (a - b) / n;
      const cells = [
        (n / seconds).toFixed(0).padStart(6),
        ((100 * (machine.idle - before.machine.idle)) / (machine.busy + machine.idle - before.machine.busy - before.machine.idle)).toFixed(1).padStart(6),
        per(threads.main, before.threads.main).toFixed(0).padStart(7),
        per(threads.other, before.threads.other).toFixed(0).padStart(8),
        per(pg, before.pg).toFixed(0).padStart(5),
        ((gen.user + gen.system) / n).toFixed(0).padStart(7),
        per(machine.busy, before.machine.busy).toFixed(0).padStart(7),
        per(status.voluntary, before.status.voluntary).toFixed(2).padStart(6),
        per(status.involuntary, before.status.involuntary).toFixed(2).padStart(8),
        per(io.reads, before.io.reads).toFixed(2).padStart(5),
        per(io.writes, before.io.writes).toFixed(2).padStart(6),
      ];
      console.log(`${row.name.slice(-32).padEnd(32)} ${cells.join('  ')}`);
    }
  }
} finally {
  await Promise.all(children.map((c) => c.stop()));
}

// Private

/** Context switches of the main thread (its own /proc status). */
function switches(pid: number): { voluntary: number; involuntary: number } {
  const text = readFileSync(`/proc/${pid}/task/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text)![1]);
  return { voluntary: field('voluntary_ctxt_switches'), involuntary: field('nonvoluntary_ctxt_switches') };
}

/** Read and write system calls of the whole process (/proc/…/io). */
function syscalls(pid: number): { reads: number; writes: number } {
  const text = readFileSync(`/proc/${pid}/io`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text)![1]);
  return { reads: field('syscr'), writes: field('syscw') };
}
