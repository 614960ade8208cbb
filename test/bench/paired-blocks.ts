/**
 * Blocks of paired-slice comparisons against the floor, for the probes that measure
 * several targets that way (paired-probe.ts): each block starts its
 * processes (afresh, or once for all blocks), warms them, measures each target against
 * the floor in paired slices (paired-load.ts), prints a line per target, and at the end
 * the median ratio over blocks with its range and the process CPU over the floor's. The
 * probes start a block's floors and services with startFloorTarget and startServiceTarget.
 */
import { BENCH_KEY, type BenchDatabase } from './bench-database.js';
import { pairedLoad } from './paired-load.js';
import { median, servicePort, startChild, startFloor, type Child } from './processes.js';
import { SHAPES, targetsFor, type Target } from './shapes.js';

/** What one block measures: the floor, and each target with the process that serves it. */
export interface Block {
  floor: { target: Target; pid: number };
  targets: { name: string; target: Target; pid: number }[];
}

export interface BlockOptions {
  blocks: number;
  connections: number;
  pairs: number;
  sliceMs: number;
  /** False: one set of processes for every block (how two processes of one program differ shows then). */
  fresh: boolean;
}

/**
 * Runs `options.blocks` blocks on the processes `start` starts (it adds each to `children`,
 * which are stopped after the block, or after all blocks when not fresh) and prints the figures.
 */
export async function measureBlocks(
  start: (children: Child[]) => Promise<Block>,
  options: BlockOptions,
): Promise<void> {
  const ratios = new Map<string, number[]>();
  const cpuOver = new Map<string, number[]>();
  const kept: Child[] = [];
  try {
    const keptBlock = options.fresh ? undefined : await warmed(start, kept, options);
    for (let block = 0; block < options.blocks; block += 1) {
      const children: Child[] = [];
      try {
        const { floor, targets } = keptBlock ?? (await warmed(start, children, options));
        for (const { name, target, pid } of targets) {
          const result = await pairedLoad(floor.target, target, {
            connections: options.connections,
            pairs: options.pairs,
            sliceMs: options.sliceMs,
            pids: [floor.pid, pid],
          });
          const ratio = result.rps[1] / result.rps[0];
          const [floorCpu, targetCpu] = result.cpu!.process;
          const [floorPostgres, targetPostgres] = result.cpu!.postgres;
          const [floorOther, targetOther] = result.cpu!.other;
          const [floorIdle, targetIdle] = result.cpu!.idle;
          ratios.set(name, [...(ratios.get(name) ?? []), ratio]);
          cpuOver.set(name, [...(cpuOver.get(name) ?? []), targetCpu - floorCpu]);
          console.log(
            `  block ${block + 1} ${name}: ${ratio.toFixed(3)} × floor (${result.rps[1].toFixed(0)} ` +
              `against ${result.rps[0].toFixed(0)} req/s); process CPU ${targetCpu.toFixed(0)} ` +
              `against ${floorCpu.toFixed(0)} µs/request, PostgreSQL ${targetPostgres.toFixed(0)} ` +
              (`against ${floorPostgres.toFixed(0)}, other ${targetOther.toFixed(0)}` +
                ` against ${floorOther.toFixed(0)}, `) +
              `idle ${targetIdle.toFixed(0)} against ${floorIdle.toFixed(0)}`,
          );
        }
      } finally {
        await Promise.all(children.map((child) => child.stop()));
      }
    }
  } finally {
    await Promise.all(kept.map((child) => child.stop()));
  }
  for (const [name, values] of ratios) {
    const sorted = [...values].sort((a, b) => a - b);
    console.log(
      `${name}: × floor median ${median(values).toFixed(3)}` +
        ` (blocks ${sorted[0]!.toFixed(3)}-${sorted.at(-1)!.toFixed(3)}` +
        `); ` +
        `process CPU over the floor's, median ${median(cpuOver.get(name)!).toFixed(0)} ` +
        `µs/request`,
    );
  }
}

/**
 * Starts a floor for a block (added to `children`): the process and its 3x365 request.
 * `graphqlHistory`: its sessions first run the GraphQL statement, as the bench's do when
 * the service beside it also answers GraphQL (startFloor).
 */
export async function startFloorTarget(
  children: Child[],
  env: Record<string, string>,
  db: BenchDatabase,
  graphqlHistory = false,
): Promise<{ pid: number; port: number; target: Target }> {
  const floor = await startFloor(env, graphqlHistory);
  children.push(floor);
  const [target] = targetsFor(SHAPE, db.lastDay, db.projectIds, { floor: floor.port, service: 0 }, BENCH_KEY);
  return { pid: floor.process.pid!, port: floor.port, target: target! };
}

/** Starts a service entry point for a block (added to `children`): the process and its 3x365 REST request. */
export async function startServiceTarget(
  children: Child[],
  entry: string,
  env: Record<string, string>,
  db: BenchDatabase,
): Promise<{ pid: number; port: number; target: Target }> {
  const service = await startChild(entry, env, servicePort);
  children.push(service);
  const [, rest] = targetsFor(SHAPE, db.lastDay, db.projectIds, { floor: 0, service: service.port }, BENCH_KEY);
  return { pid: service.process.pid!, port: service.port, target: rest! };
}

// Private

/** The shape every block measures. */
const SHAPE = SHAPES.find((s) => s.name === '3x365')!;

/** A block's processes, each warmed (V8's compilation, the pools' connections and prepared statements). */
async function warmed(
  start: (children: Child[]) => Promise<Block>,
  children: Child[],
  options: BlockOptions,
): Promise<Block> {
  const block = await start(children);
  for (const { target } of block.targets)
    await pairedLoad(block.floor.target, target, { connections: options.connections, pairs: 4, sliceMs: 500 });
  return block;
}
