/**
 * `npx tsx test/bench/paired-probe.ts`: 3x365 REST of one or more builds against the
 * floor in paired slices (paired-load.ts), and as a control a second floor against the
 * floor (any ratio but 1.00 there is the method's own error). Each of BLOCKS blocks
 * starts every process afresh, warms it, and measures PAIRS pairs of SLICE_MS slices per
 * comparison: two processes of the same program kept a difference of 2-4% for as long as
 * they ran (docs/performance.md, "Paired slices"), so only fresh processes per block let
 * the blocks' median average that out. Prints each block's ratios, the CPU µs per request
 * of each process and of PostgreSQL, and the medians.
 *
 * To compare a change with main: `git worktree add /tmp/base main`, link node_modules
 * there, `npm run build` in it, then BUILDS=/tmp/base/dist/src/main.js,src/main.ts.
 *
 * Environment: BUILDS (src/main.ts), C connections (8), BLOCKS (6), PAIRS (20), SLICE_MS
 * (250), CONTROL (1: also a second floor against the floor), FRESH (1; 0: one set of
 * processes for every block, which shows how two processes of one program differ).
 * BUILDS= (empty) compares the two floors alone. BUILD_ENV_<i> (`NAME=value`, several
 * separated by `;`) adds to the environment of build i (from 0): a runtime flag in
 * NODE_OPTIONS, say, against the same build without it. FLOOR2_ENV does the same for the
 * second floor.
 * Uses the bench database (bench-database.ts).
 */
import { BENCH_SERVER_URL, benchServiceEnv, ensureBenchDatabase } from './bench-database.js';
import { measureBlocks, startFloorTarget, startServiceTarget, type Block } from './paired-blocks.js';
import type { Child } from './processes.js';

const BUILDS = (process.env.BUILDS ?? 'src/main.ts').split(',').filter((b) => b !== '');
const CONNECTIONS = Number(process.env.C ?? 8);
const BLOCKS = Number(process.env.BLOCKS ?? 6);
const PAIRS = Number(process.env.PAIRS ?? 20);
const SLICE_MS = Number(process.env.SLICE_MS ?? 250);
const CONTROL = process.env.CONTROL !== '0';
const FRESH = process.env.FRESH !== '0';

const db = await ensureBenchDatabase(BENCH_SERVER_URL, (line) => process.stderr.write(`${line}\n`));
const env = benchServiceEnv(db);
console.log(
  `3x365 at ${CONNECTIONS} connections: ${BLOCKS} blocks ` +
    `of ${FRESH ? 'fresh processes' : 'the same processes'}` +
    `, ${PAIRS} ` +
    `pairs of ${SLICE_MS} ms slices per comparison`,
);
await measureBlocks(startProcesses, {
  blocks: BLOCKS,
  connections: CONNECTIONS,
  pairs: PAIRS,
  sliceMs: SLICE_MS,
  fresh: FRESH,
});

/** The floor, each build, and (CONTROL) a second floor. */
async function startProcesses(children: Child[]): Promise<Block> {
  const floor = await startFloorTarget(children, env, db);
  const targets: Block['targets'] = [];
  for (const [i, build] of BUILDS.entries()) {
    const { target, pid } = await startServiceTarget(children, build, { ...env, ...buildEnv(i) }, db);
    targets.push({ name: `${i}:${build}`, target, pid });
  }
  if (CONTROL) {
    const { target, pid } = await startFloorTarget(children, { ...env, ...envFrom(process.env.FLOOR2_ENV) }, db);
    targets.push({ name: 'floor 2', target, pid });
  }
  return { floor: { target: floor.target, pid: floor.pid }, targets };
}

/** Build i's own additions to the environment, from BUILD_ENV_<i>. */
function buildEnv(i: number): Record<string, string> {
  return envFrom(process.env[`BUILD_ENV_${i}`]);
}

/** `NAME=value;NAME=value` as an environment. */
function envFrom(spec = ''): Record<string, string> {
  return Object.fromEntries(
    spec
      .split(';')
      .filter((pair) => pair.includes('='))
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
}
