/**
 * `npx tsx test/bench/thread-probe.ts`: the floor and the service (BUILD, dist/src/main.js:
 * `npm run build` first) loaded in paired slices (3x365, C connections, PAIRS pairs of
 * 250 ms), in BLOCKS blocks of fresh processes, with each process's time per answer read
 * from its threads (/proc/<pid>/task/<tid>): the main thread's user and system CPU, the
 * time it waited runnable for a core (schedstat), how often it was put on a core, and the
 * CPU of every other thread (V8's helpers: garbage collection and compilation).
 * Shows whether the service's extra CPU is on its main thread, and whether that thread
 * waits for a core more or less than the floor's.
 */
import { readFileSync } from 'node:fs';
import { BENCH_SERVER_URL, benchServiceEnv, ensureBenchDatabase } from './bench-database.js';
import { startFloorTarget, startServiceTarget } from './paired-blocks.js';
import { pairedLoad } from './paired-load.js';
import { median, threadCpuUs, type Child } from './processes.js';

const CONNECTIONS = Number(process.env.C ?? 8);
const PAIRS = Number(process.env.PAIRS ?? 20);
const BLOCKS = Number(process.env.BLOCKS ?? 3);
const BUILD = process.env.BUILD ?? 'dist/src/main.js';

/** What is read of one process, summed over its threads (µs, or a count). */
interface ThreadTimes {
  mainUser: number;
  mainSystem: number;
  mainWaiting: number;
  mainSlices: number;
  helpers: number;
}

const FIELDS: (keyof ThreadTimes)[] = ['mainUser', 'mainSystem', 'mainWaiting', 'mainSlices', 'helpers'];
const LABELS: Record<keyof ThreadTimes, string> = {
  mainUser: 'main user µs',
  mainSystem: 'main system µs',
  mainWaiting: 'main waiting for a core µs',
  mainSlices: 'main times on a core',
  helpers: 'other threads µs',
};

const db = await ensureBenchDatabase(BENCH_SERVER_URL, (line) => process.stderr.write(`${line}\n`));
const env = benchServiceEnv(db);
console.log(`3x365 at ${CONNECTIONS} connections: ${BLOCKS} blocks of fresh processes, ${PAIRS} pairs of 250 ms slices; per answer, floor → service`);
const blocks: [ThreadTimes, ThreadTimes][] = [];
for (let block = 1; block <= BLOCKS; block += 1) {
  const children: Child[] = [];
  try {
    const floor = await startFloorTarget(children, env, db);
    const service = await startServiceTarget(children, BUILD, env, db);
    await pairedLoad(floor.target, service.target, { connections: CONNECTIONS, pairs: 4, sliceMs: 500 });
    const before = [readThreads(floor.pid), readThreads(service.pid)] as const;
    const result = await pairedLoad(floor.target, service.target, { connections: CONNECTIONS, pairs: PAIRS, sliceMs: 250 });
    const after = [readThreads(floor.pid), readThreads(service.pid)] as const;
    const perAnswer = [0, 1].map((i) => perRequest(before[i]!, after[i]!, result.requests[i]!)) as [ThreadTimes, ThreadTimes];
    blocks.push(perAnswer);
    console.log(`  block ${block}: ${(result.rps[1] / result.rps[0]).toFixed(3)} × floor (${result.rps[1].toFixed(0)} against ${result.rps[0].toFixed(0)} req/s); ${describe(perAnswer)}`);
  } finally {
    for (const child of children) await child.stop();
  }
}
const medians = [0, 1].map((i) => Object.fromEntries(FIELDS.map((f) => [f, median(blocks.map((b) => b[i]![f]))])) as unknown as ThreadTimes) as [ThreadTimes, ThreadTimes];
console.log(`medians: ${describe(medians)}`);

function describe([floor, service]: [ThreadTimes, ThreadTimes]): string {
  return FIELDS.map((f) => `${LABELS[f]} ${format(floor[f], f)} → ${format(service[f], f)}`).join(', ');
}

function format(value: number, field: keyof ThreadTimes): string {
  return field === 'mainSlices' ? value.toFixed(2) : value.toFixed(0);
}

function perRequest(before: ThreadTimes, after: ThreadTimes, requests: number): ThreadTimes {
  return Object.fromEntries(FIELDS.map((f) => [f, (after[f] - before[f]) / requests])) as unknown as ThreadTimes;
}

/**
 * The process's threads as ThreadTimes: the main thread's user and system CPU from its
 * `stat` (clock ticks of 10 ms, so a run needs thousands of answers), its waiting and
 * slices from its `schedstat` (nanoseconds on a run queue, times run), and the other
 * threads' CPU from threadCpuUs.
 */
function readThreads(pid: number): ThreadTimes {
  const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const [, waitingNs, slices] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').trim().split(' ').map(Number);
  return {
    mainUser: Number(fields[11]) * 10_000,
    mainSystem: Number(fields[12]) * 10_000,
    mainWaiting: waitingNs! / 1000,
    mainSlices: slices!,
    helpers: threadCpuUs(pid).other,
  };
}
