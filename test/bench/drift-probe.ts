/**
 * `npx tsx test/bench/drift-probe.ts`: the floor alone under one steady 3x365 load, timed
 * in consecutive windows: requests per second, CPU µs per request of the floor, of every
 * PostgreSQL process and of the load generator (this process), and the machine's idle
 * and stolen time. Shows how much the same work's speed drifts from window to window
 * (docs/benchmarks.md, "Paired slices").
 *
 * Environment: C connections (8), WINDOWS (20), SECONDS per window (2). Uses the bench
 * database (bench-database.ts).
 */
import autocannon from 'autocannon';
import { readFileSync } from 'node:fs';
import { BENCH_KEY, BENCH_SERVER_URL, benchServiceEnv, ensureBenchDatabase } from './bench-database.js';
import { cpuUs, postgresCpuUs, startFloor } from './processes.js';
import { SHAPES, targetsFor } from './shapes.js';

const CONNECTIONS = Number(process.env.C ?? 8);
const WINDOWS = Number(process.env.WINDOWS ?? 20);
const SECONDS = Number(process.env.SECONDS ?? 2);

const db = await ensureBenchDatabase(BENCH_SERVER_URL, (line) => process.stderr.write(`${line}\n`));
const floor = await startFloor(benchServiceEnv(db), false);
try {
  const [target] = targetsFor(SHAPES.find((s) => s.name === '3x365')!, db.lastDay, db.projectIds, { floor: floor.port, service: 0 }, BENCH_KEY);
  await autocannon({ url: target!.url, connections: CONNECTIONS, duration: 3 }); // warm
  const stat = `/proc/${floor.process.pid}/stat`;
  console.log(`the floor alone, 3x365 at ${CONNECTIONS} connections, ${WINDOWS} windows of ${SECONDS} s`);
  for (let window = 0; window < WINDOWS; window += 1) {
    const before = { floor: cpuUs(stat), postgres: postgresCpuUs(), loadgen: process.cpuUsage(), machine: machineTicks() };
    const result = await autocannon({ url: target!.url, connections: CONNECTIONS, duration: SECONDS });
    const n = result.requests.total;
    const loadgen = process.cpuUsage(before.loadgen);
    const machine = machineTicks();
    const ticks = machine.all - before.machine.all;
    console.log([
      `${result.requests.average.toFixed(0)} req/s`,
      `floor ${((cpuUs(stat) - before.floor) / n).toFixed(0)}`,
      `postgres ${((postgresCpuUs() - before.postgres) / n).toFixed(0)}`,
      `load generator ${((loadgen.user + loadgen.system) / n).toFixed(0)} µs/request`,
      `idle ${((100 * (machine.idle - before.machine.idle)) / ticks).toFixed(0)}%`,
      `stolen ${((100 * (machine.stolen - before.machine.stolen)) / ticks).toFixed(1)}%`,
    ].join('  '));
  }
} finally {
  await floor.stop();
}

/** The machine's CPU time so far from /proc/stat, in ticks: all of it, idle (with I/O wait) and stolen by the host. */
function machineTicks(): { all: number; idle: number; stolen: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  return { all: fields.reduce((a, b) => a + b, 0), idle: fields[3]! + fields[4]!, stolen: fields[7]! };
}
