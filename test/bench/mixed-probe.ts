/**
 * `npx tsx test/bench/mixed-probe.ts`: 3x365 REST against the floor in paired slices
 * (paired-load.ts), each pair of pairs right after a burst of other load on the service,
 * as the bench's rotation has it (the service's process serves the graphql row between
 * REST's rounds). MIX says what the burst is: `graphql` (the bench's GraphQL request),
 * `rest` (REST itself: the process as busy, on the same code) or `none` (a pause).
 * BLOCKS blocks of fresh processes, ROUNDS bursts and pairs per block, BURST_S seconds per
 * burst, C connections. The floor's PostgreSQL sessions run the GraphQL statement first
 * when MIX is graphql, as in the bench. Does GraphQL in the same process slow the REST
 * answers that come after it?
 */
import autocannon from 'autocannon';
import { BENCH_KEY, BENCH_SERVER_URL, benchServiceEnv, ensureBenchDatabase } from './bench-database.js';
import { pairedLoad } from './paired-load.js';
import { startFloorTarget, startServiceTarget } from './paired-blocks.js';
import { median, threadCpuUs, type Child } from './processes.js';
import { SHAPES, targetsFor } from './shapes.js';

const MIX = process.env.MIX ?? 'graphql';
const BLOCKS = Number(process.env.BLOCKS ?? 3);
const ROUNDS = Number(process.env.ROUNDS ?? 8);
const BURST_S = Number(process.env.BURST_S ?? 1);
const CONNECTIONS = Number(process.env.C ?? 8);
/** Seconds between each burst and its pairs (the bench's rotation has about 15 s between the graphql row and REST's next round). */
const PAUSE_S = Number(process.env.PAUSE_S ?? 0);
/** `graphql`: 3 s of GraphQL once, after the warm-up and before the rounds (its lasting effect on REST, without the bursts'). */
const PRIME = process.env.PRIME ?? '';
/** The service's entry point: src/main.ts, or a build's (another worktree's dist/src/main.js, say). */
const BUILD = process.env.BUILD ?? 'src/main.ts';
if (!['graphql', 'rest', 'none'].includes(MIX)) throw new Error(`MIX is graphql, rest or none, not ${MIX}`);

const db = await ensureBenchDatabase(BENCH_SERVER_URL, (line) => process.stderr.write(`${line}\n`));
const env = benchServiceEnv(db);
const shape = SHAPES.find((s) => s.name === '3x365')!;
console.log(`${BUILD}, 3x365 at ${CONNECTIONS} connections, REST × floor in paired slices ${PAUSE_S} s after each ${BURST_S} s burst of ${MIX} on the service${PRIME ? ` (primed with 3 s of ${PRIME})` : ''}: ${BLOCKS} blocks of ${ROUNDS} rounds`);
const ratios: number[] = [];
for (let block = 1; block <= BLOCKS; block += 1) {
  const children: Child[] = [];
  try {
    const floor = await startFloorTarget(children, env, db, MIX === 'graphql');
    const service = await startServiceTarget(children, BUILD, env, db);
    const [floorTarget, rest] = [floor.target, service.target];
    const [, , graphql] = targetsFor(shape, db.lastDay, db.projectIds, { floor: floor.port, service: service.port }, BENCH_KEY);
    const burst = MIX === 'graphql' ? graphql! : rest;
    await pairedLoad(floorTarget, rest, { connections: CONNECTIONS, pairs: 4, sliceMs: 500 });
    if (PRIME === 'graphql') await autocannon({ url: graphql!.url, method: graphql!.method, headers: graphql!.headers, body: graphql!.body, connections: CONNECTIONS, duration: 3 });
    const served: [number, number] = [0, 0];
    const ms: [number, number] = [0, 0];
    // CPU µs of each target's process and of PostgreSQL while it was loaded, summed over the rounds.
    const process_: [number, number] = [0, 0];
    const postgres: [number, number] = [0, 0];
    // The service's main thread and its other threads (V8's helpers), over the pairs (its own slices and the floor's).
    const threads = { main: 0, helpers: 0 };
    for (let round = 0; round < ROUNDS; round += 1) {
      if (MIX === 'none') await new Promise((resolve) => setTimeout(resolve, BURST_S * 1000));
      else await autocannon({ url: burst.url, method: burst.method, headers: burst.headers, body: burst.body, connections: CONNECTIONS, duration: BURST_S });
      if (PAUSE_S > 0) {
        await new Promise((resolve) => setTimeout(resolve, PAUSE_S * 1000));
        // The machine's first fraction of a second after a pause is slow for whoever runs
        // first (the floor: 1,350-1,500 req/s against its 1,650): a slice of the floor alone takes it.
        await pairedLoad(floorTarget, floorTarget, { connections: CONNECTIONS, pairs: 1, sliceMs: 250 });
      }
      const before = threadCpuUs(service.pid);
      const result = await pairedLoad(floorTarget, rest, { connections: CONNECTIONS, pairs: 2, sliceMs: 250, pids: [floor.pid, service.pid] });
      const after = threadCpuUs(service.pid);
      threads.main += after.main - before.main;
      threads.helpers += after.other - before.other;
      for (const i of [0, 1] as const) {
        served[i] += result.requests[i];
        ms[i] += (result.requests[i] / result.rps[i]) * 1000;
        process_[i] += result.cpu!.process[i] * result.requests[i];
        postgres[i] += result.cpu!.postgres[i] * result.requests[i];
      }
    }
    const ratio = served[1] / ms[1] / (served[0] / ms[0]);
    ratios.push(ratio);
    console.log(`  block ${block}: ${ratio.toFixed(3)} × floor (${((served[1] / ms[1]) * 1000).toFixed(0)} against ${((served[0] / ms[0]) * 1000).toFixed(0)} req/s); process CPU ${(process_[1] / served[1]).toFixed(0)} against ${(process_[0] / served[0]).toFixed(0)} µs/request, PostgreSQL ${(postgres[1] / served[1]).toFixed(0)} against ${(postgres[0] / served[0]).toFixed(0)}; the service's main thread ${(threads.main / served[1]).toFixed(0)}, other threads ${(threads.helpers / served[1]).toFixed(0)} µs/request`);
  } finally {
    for (const child of children) await child.stop();
  }
}
console.log(`after ${MIX}: × floor median ${median(ratios).toFixed(3)} (blocks ${Math.min(...ratios).toFixed(3)}-${Math.max(...ratios).toFixed(3)})`);
