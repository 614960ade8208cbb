/**
 * `FLOOR_PORT=… SERVICE_PORT=… npx tsx test/bench/profile-load.ts`: the load for the CPU
 * profiles of docs/benchmarks.md ("Where REST's extra time goes"): the 3x365 request to a
 * running floor and service in paired slices (paired-load.ts), 2 s of warm-up, a 4 s pause,
 * then PAIRS (40) pairs of 250 ms slices. Prints the answers each target gave in the
 * measured part, for `profile-split.mjs`; its SKIP_MS should end inside the pause.
 */
import { BENCH_KEY, BENCH_SERVER_URL, ensureBenchDatabase } from './bench-database.js';
import { pairedLoad } from './paired-load.js';
import { SHAPES, targetsFor } from './shapes.js';

const db = await ensureBenchDatabase(BENCH_SERVER_URL, (line) => process.stderr.write(`${line}\n`));
const shape = SHAPES.find((s) => s.name === '3x365')!;
const ports = { floor: Number(process.env.FLOOR_PORT), service: Number(process.env.SERVICE_PORT) };
const [floor, rest] = targetsFor(shape, db.lastDay, db.projectIds, ports, BENCH_KEY);
await pairedLoad(floor!, rest!, { connections: 8, pairs: 4, sliceMs: 250 });
await new Promise((resolve) => setTimeout(resolve, 4000));
const measured = await pairedLoad(floor!, rest!, { connections: 8, pairs: Number(process.env.PAIRS ?? 40), sliceMs: 250 });
console.log(`floor ${measured.requests[0]} answers (${measured.rps[0].toFixed(0)}/s), service ${measured.requests[1]} answers (${measured.rps[1].toFixed(0)}/s)`);
