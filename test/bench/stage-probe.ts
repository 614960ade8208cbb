/**
 * `npx tsx test/bench/stage-probe.ts`: where REST's cost over the floor lies, by leaving
 * parts out. Each stage is the service built with `test/bench/stages.patch` and started
 * with KO_STAGE set; each is measured against the floor in paired slices (paired-load.ts),
 * in BLOCKS blocks of fresh processes:
 *
 * - floor-inside: the floor's own code (floor-server.ts) answering inside the service's
 *   process, on its own pool: what the process alone costs (its heap, modules, timers);
 * - handler: the REST handler called straight from the listener (no lifecycle, no key);
 * - noclose: the lifecycle without its `close` listener (no log line, no in-flight count), no key;
 * - nolog: the lifecycle with its `close` listener but no log line, request id or `/metrics` count, no key;
 * - noauth: the whole lifecycle, no key;
 * - main: the service as it is (the patch leaves it unchanged).
 *
 * To build the stages: `git worktree add /tmp/stages HEAD`, link node_modules there,
 * `git -C /tmp/stages apply "$PWD/test/bench/stages.patch"`, `npx tsc -p tsconfig.build.json`
 * in it; then BUILD=/tmp/stages/dist/src/main.js (the default).
 *
 * Environment: BUILD, STAGES (all of the above), C connections (8), BLOCKS (5), PAIRS (20),
 * SLICE_MS (250). Uses the bench database (bench-database.ts).
 */
import { BENCH_KEY, BENCH_SERVER_URL, benchServiceEnv, ensureBenchDatabase } from './bench-database.js';
import { pairedLoad } from './paired-load.js';
import { median, servicePort, startChild, startFloor, type Child } from './processes.js';
import { SHAPES, targetsFor, type Target } from './shapes.js';

const BUILD = process.env.BUILD ?? '/tmp/stages/dist/src/main.js';
const STAGES = (process.env.STAGES ?? 'floor-inside,handler,noclose,nolog,noauth,main').split(',');
const CONNECTIONS = Number(process.env.C ?? 8);
const BLOCKS = Number(process.env.BLOCKS ?? 5);
const PAIRS = Number(process.env.PAIRS ?? 20);
const SLICE_MS = Number(process.env.SLICE_MS ?? 250);

const db = await ensureBenchDatabase(BENCH_SERVER_URL, (line) => process.stderr.write(`${line}\n`));
const env = benchServiceEnv(db);
const shape = SHAPES.find((s) => s.name === '3x365')!;
const ratios = new Map<string, number[]>(STAGES.map((stage) => [stage, []]));
const cpu = new Map<string, number[]>(STAGES.map((stage) => [stage, []]));
console.log(`3x365 at ${CONNECTIONS} connections, ${BLOCKS} blocks of fresh processes, ${PAIRS} pairs of ${SLICE_MS} ms slices per stage`);
for (let block = 0; block < BLOCKS; block += 1) {
  const children: Child[] = [];
  try {
    const floor = await startFloor(env, false);
    children.push(floor);
    const [floorTarget] = targetsFor(shape, db.lastDay, db.projectIds, { floor: floor.port, service: 0 }, BENCH_KEY);
    const stages: [string, Target, number][] = [];
    for (const stage of STAGES) {
      const service = await startChild(BUILD, { ...env, KO_STAGE: stage === 'floor-inside' ? 'main' : stage }, servicePort);
      children.push(service);
      const [, rest] = targetsFor(shape, db.lastDay, db.projectIds, { floor: floor.port, service: service.port }, BENCH_KEY);
      // The patched listener hands the floor's URL to the floor's code.
      const target = stage === 'floor-inside' ? { ...floorTarget!, url: floorTarget!.url.replace(`:${floor.port}/`, `:${service.port}/`) } : rest!;
      stages.push([stage, target, service.process.pid!]);
    }
    for (const [, target] of stages) await pairedLoad(floorTarget!, target, { connections: CONNECTIONS, pairs: 4, sliceMs: 500 }); // warm
    for (const [stage, target, pid] of stages) {
      const result = await pairedLoad(floorTarget!, target, { connections: CONNECTIONS, pairs: PAIRS, sliceMs: SLICE_MS, pids: [floor.process.pid!, pid] });
      const ratio = result.rps[1] / result.rps[0];
      const [floorCpu, stageCpu] = result.cpu!.process;
      ratios.get(stage)!.push(ratio);
      cpu.get(stage)!.push(stageCpu - floorCpu);
      console.log(`  block ${block + 1} ${stage}: ${ratio.toFixed(3)} × floor; process CPU ${stageCpu.toFixed(0)} against ${floorCpu.toFixed(0)} µs/request, PostgreSQL ${result.cpu!.postgres.map((c) => c.toFixed(0)).join(' against ')}`);
    }
  } finally {
    await Promise.all(children.map((child) => child.stop()));
  }
}
for (const stage of STAGES) {
  const values = ratios.get(stage)!;
  const sorted = [...values].sort((a, b) => a - b);
  console.log(`${stage.padEnd(12)} × floor median ${median(values).toFixed(3)} (blocks ${sorted[0]!.toFixed(3)}-${sorted.at(-1)!.toFixed(3)}); process CPU over the floor's, median ${median(cpu.get(stage)!).toFixed(0)} µs/request`);
}
