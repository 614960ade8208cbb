/**
 * `npx tsx test/bench/paired-probe.ts`: how steady the paired-slice ratio is
 * (paired-load.ts). Measures 3x365 REST against the floor, and as a control a second
 * floor against the floor (any ratio but 1.00 there is the method's own error), in
 * BLOCKS blocks of PAIRS pairs of SLICE_MS slices each, and prints each block's ratio.
 *
 * Environment: C connections (8), BLOCKS (6), PAIRS (20), SLICE_MS (250), CONTROL (1: also
 * the floor against a second floor). Uses the bench database (bench-database.ts).
 */
import { BENCH_KEY, BENCH_SERVER_URL, benchServiceEnv, ensureBenchDatabase } from './bench-database.js';
import { pairedLoad } from './paired-load.js';
import { median, servicePort, startChild, startFloor } from './processes.js';
import { SHAPES, targetsFor, type Target } from './shapes.js';

const CONNECTIONS = Number(process.env.C ?? 8);
const BLOCKS = Number(process.env.BLOCKS ?? 6);
const PAIRS = Number(process.env.PAIRS ?? 20);
const SLICE_MS = Number(process.env.SLICE_MS ?? 250);
const CONTROL = process.env.CONTROL !== '0';

const db = await ensureBenchDatabase(BENCH_SERVER_URL, (line) => process.stderr.write(`${line}\n`));
const env = benchServiceEnv(db);
const shape = SHAPES.find((s) => s.name === '3x365')!;
const floor = await startFloor(env, false);
const second = CONTROL ? await startFloor(env, false) : undefined;
const service = await startChild('src/main.ts', env, servicePort);
try {
  const [floorTarget, rest] = targetsFor(shape, db.lastDay, db.projectIds, { floor: floor.port, service: service.port }, BENCH_KEY);
  const comparisons: [string, Target, Target, [number, number]][] = [['rest / floor', floorTarget!, rest!, [floor.process.pid!, service.process.pid!]]];
  if (second !== undefined) {
    const [other] = targetsFor(shape, db.lastDay, db.projectIds, { floor: second.port, service: 0 }, BENCH_KEY);
    comparisons.push(['floor 2 / floor', floorTarget!, other!, [floor.process.pid!, second.process.pid!]]);
  }
  // Warm every target (V8's compilation, the pools' connections and prepared statements).
  for (const [, a, b] of comparisons) await pairedLoad(a, b, { connections: CONNECTIONS, pairs: 4, sliceMs: 500 });
  console.log(`3x365 at ${CONNECTIONS} connections: ${BLOCKS} blocks of ${PAIRS} pairs of ${SLICE_MS} ms slices`);
  const ratios = new Map<string, number[]>(comparisons.map(([name]) => [name, []]));
  for (let block = 0; block < BLOCKS; block += 1) {
    for (const [name, a, b, pids] of comparisons) {
      const result = await pairedLoad(a, b, { connections: CONNECTIONS, pairs: PAIRS, sliceMs: SLICE_MS, pids });
      const ratio = result.rps[1] / result.rps[0];
      ratios.get(name)!.push(ratio);
      const pairs = [...result.pairRatios].sort((x, y) => x - y);
      console.log(`  block ${block + 1} ${name}: ${ratio.toFixed(3)} (${result.rps.map((r) => r.toFixed(0)).join(' vs ')} req/s; pairs ${pairs[0]!.toFixed(2)}-${pairs.at(-1)!.toFixed(2)}, median ${median(pairs).toFixed(3)}; CPU µs/request process ${result.cpu!.process.map((c) => c.toFixed(0)).join(' vs ')}, postgres ${result.cpu!.postgres.map((c) => c.toFixed(0)).join(' vs ')})`);
    }
  }
  for (const [name, values] of ratios) {
    const sorted = [...values].sort((x, y) => x - y);
    console.log(`${name}: median ${median(values).toFixed(3)}, blocks ${sorted[0]!.toFixed(3)}-${sorted.at(-1)!.toFixed(3)}`);
  }
} finally {
  await Promise.all([floor.stop(), second?.stop(), service.stop()]);
}
