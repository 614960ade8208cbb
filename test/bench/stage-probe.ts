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
import { BENCH_SERVER_URL, benchServiceEnv, ensureBenchDatabase } from './bench-database.js';
import { measureBlocks, startFloorTarget, startServiceTarget, type Block } from './paired-blocks.js';
import type { Child } from './processes.js';

const BUILD = process.env.BUILD ?? '/tmp/stages/dist/src/main.js';
const STAGES = (process.env.STAGES ?? 'floor-inside,handler,noclose,nolog,noauth,main').split(',');
const CONNECTIONS = Number(process.env.C ?? 8);
const BLOCKS = Number(process.env.BLOCKS ?? 5);
const PAIRS = Number(process.env.PAIRS ?? 20);
const SLICE_MS = Number(process.env.SLICE_MS ?? 250);

const db = await ensureBenchDatabase(BENCH_SERVER_URL, (line) => process.stderr.write(`${line}\n`));
const env = benchServiceEnv(db);
console.log(`3x365 at ${CONNECTIONS} connections, ${BLOCKS} blocks of fresh processes, ${PAIRS} pairs of ${SLICE_MS} ms slices per stage`);
await measureBlocks(startStages, { blocks: BLOCKS, connections: CONNECTIONS, pairs: PAIRS, sliceMs: SLICE_MS, fresh: true });

/** The floor, and one service process per stage. */
async function startStages(children: Child[]): Promise<Block> {
  const floor = await startFloorTarget(children, env, db);
  const targets: Block['targets'] = [];
  for (const stage of STAGES) {
    const service = await startServiceTarget(children, BUILD, { ...env, KO_STAGE: stage === 'floor-inside' ? 'main' : stage }, db);
    // The patched listener hands the floor's URL to the floor's code.
    const target = stage === 'floor-inside' ? { ...floor.target, url: floor.target.url.replace(`:${floor.port}/`, `:${service.port}/`) } : service.target;
    targets.push({ name: stage, target, pid: service.pid });
  }
  return { floor: { target: floor.target, pid: floor.pid }, targets };
}
