/**
 * `npx tsx test/bench/gc-probe.ts`: full collections and CPU per request of the service
 * through a sequence of loads, to see the states its collector settles in
 * (docs/benchmarks.md, "REST alone and beside GraphQL", "Driver rows emptied once read").
 * Each `rest` step is 3 s of the 3x365 REST request; `week` is 100 requests of the same
 * series by week, `graphql` 100 GraphQL requests for it and `graphql-3s` 3 s of them, as
 * a GraphQL row of the bench does; `rest-1x365` and `graphql-1x365` are 3 s of the 1x365
 * rows' requests, which `npm run bench` runs before the 3x365 ones. Before the driver's
 * rows were emptied once read, one such step could move the REST rounds after it from
 * about none to about four full collections per round for good.
 *
 * Environment: SEQUENCE (default rest×4,week,rest×4), C connections (32). Uses the bench
 * database (bench-database.ts).
 */
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { BENCH_KEY, BENCH_SERVER_URL, benchServiceEnv, ensureBenchDatabase } from './bench-database.js';
import { cpuUs, servicePort } from './processes.js';
import { SHAPES, targetsFor } from './shapes.js';

const CONNECTIONS = Number(process.env.C ?? 32);
const SEQUENCE = (process.env.SEQUENCE ?? 'rest,rest,rest,rest,week,rest,rest,rest,rest').split(',');

const db = await ensureBenchDatabase(BENCH_SERVER_URL, (line) => process.stderr.write(`${line}\n`));
const env = { ...process.env, ...benchServiceEnv(db) };
// V8 writes --trace-gc lines to standard output, among the service's JSON log lines.
const child = spawn(process.execPath, ['--trace-gc', 'scripts/run.mjs', 'src/main.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
let fullCollections = 0;
let scavenges = 0;
createInterface({ input: child.stdout! }).on('line', (line) => {
  if (line.includes('Mark-Compact')) fullCollections += 1;
  else if (line.includes('Scavenge')) scavenges += 1;
});
const port = await new Promise<number>((resolve, reject) => {
  createInterface({ input: child.stderr! }).on('line', (line) => {
    const found = servicePort(line);
    if (found !== undefined) resolve(found);
  });
  child.once('exit', (code) => reject(new Error(`the service exited with ${code}`)));
});

try {
  const shape = SHAPES.find((s) => s.name === '3x365')!;
  const [, rest, graphql] = targetsFor(shape, db.lastDay, db.projectIds, { floor: 0, service: port }, BENCH_KEY);
  const [, restOne, graphqlOne] = targetsFor(SHAPES.find((s) => s.name === '1x365')!, db.lastDay, db.projectIds, { floor: 0, service: port }, BENCH_KEY);
  const steps = {
    rest: { ...rest!, duration: 3 },
    week: { ...rest!, url: `${rest!.url}&interval=week`, amount: 100 },
    graphql: { ...graphql!, amount: 100 },
    'graphql-3s': { ...graphql!, duration: 3 },
    // 3 s of the 1x365 rows' requests, as `npm run bench` runs them before the 3x365 rows.
    'rest-1x365': { ...restOne!, duration: 3 },
    'graphql-1x365': { ...graphqlOne!, duration: 3 },
  };
  const pid = child.pid!;
  console.log(`3x365 at ${CONNECTIONS} connections; CPU µs per request of the service's main thread and of the whole process`);
  console.log('step        requests   main    all  full collections  scavenges');
  for (const name of SEQUENCE) {
    const step = steps[name as keyof typeof steps];
    if (step === undefined) throw new Error(`unknown step ${name}; expected ${Object.keys(steps).join(', ')}`);
    fullCollections = 0;
    scavenges = 0;
    const before = { main: cpuUs(`/proc/${pid}/task/${pid}/stat`), all: cpuUs(`/proc/${pid}/stat`) };
    const result = await autocannon({ ...step, connections: CONNECTIONS });
    const n = result.requests.total;
    const main = (cpuUs(`/proc/${pid}/task/${pid}/stat`) - before.main) / n;
    const all = (cpuUs(`/proc/${pid}/stat`) - before.all) / n;
    console.log(`${name.padEnd(10)} ${String(n).padStart(9)} ${main.toFixed(0).padStart(6)} ${all.toFixed(0).padStart(6)} ${String(fullCollections).padStart(17)} ${String(scavenges).padStart(10)}${result.non2xx > 0 ? `  non-2xx ${result.non2xx}` : ''}`);
  }
} finally {
  child.kill('SIGTERM');
}
