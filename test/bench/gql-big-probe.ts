/**
 * `npx tsx test/bench/gql-big-probe.ts`: the 76x3650 requests on one service, steps in a
 * row: `CS=graphql:32,rest:32` (target:connections, comma-separated), SECONDS per step,
 * and with LEAD=1 a second of the same load first, untimed, as the bench's lead-in: its
 * load generator closes every connection at the end of it, requests in flight included.
 * Prints each step's answers per second, latency and the service's CPU per answer (main
 * thread, other threads). BUILD is the service's entry (default src/main.ts); SHAPE another of
 * the bench's shapes (3x365, say).
 */
import autocannon from 'autocannon';
import { BENCH_KEY, BENCH_SERVER_URL, benchServiceEnv, ensureBenchDatabase } from './bench-database.js';
import { startServiceTarget } from './paired-blocks.js';
import { threadCpuUs, type Child } from './processes.js';
import { SHAPES, targetsFor } from './shapes.js';

const STEPS = (process.env.CS ?? 'graphql:8,graphql:32').split(',').map((step) => step.split(':') as [string, string]);
const SECONDS = Number(process.env.SECONDS ?? 12);
const LEAD = Number(process.env.LEAD ?? 0);

const db = await ensureBenchDatabase(BENCH_SERVER_URL, (line) => process.stderr.write(`${line}\n`));
const shape = SHAPES.find((s) => s.name === (process.env.SHAPE ?? '76x3650'))!;
const children: Child[] = [];
try {
  const service = await startServiceTarget(children, process.env.BUILD ?? 'src/main.ts', benchServiceEnv(db), db);
  const [, rest, graphql] = targetsFor(shape, db.lastDay, db.projectIds, { floor: 0, service: service.port }, BENCH_KEY);
  for (const [name, connections] of STEPS) {
    const target = name === 'rest' ? rest! : graphql!;
    const load = (duration: number) => autocannon({ url: target.url, method: target.method, headers: target.headers, body: target.body, connections: Number(connections), duration });
    if (LEAD > 0) await load(LEAD);
    const before = threadCpuUs(service.pid);
    const result = await load(SECONDS);
    const after = threadCpuUs(service.pid);
    const answers = result.requests.total;
    const usPer = (us: number) => (us / answers).toFixed(0);
    console.log(`${name} c=${connections}: ${answers} answers, ${result.requests.average.toFixed(1)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms; service main thread ${usPer(after.main - before.main)} µs/answer, other threads ${usPer(after.other - before.other)}; errors ${result.errors}, non-2xx ${result.non2xx}`);
  }
} finally {
  for (const child of children) await child.stop();
}
