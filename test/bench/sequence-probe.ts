/**
 * `npx tsx test/bench/sequence-probe.ts`: the 3x365 REST request against the floor in
 * alternating rounds (each after 1 s of its own load, GraphQL load after each REST round,
 * as in `npm run bench`), then 10 s of another load (MID), then the same rounds again, in
 * one pair of processes. It asks whether what a service served before changes what REST
 * costs it after: `npm run bench` runs the 1x365 rows before the 3x365 ones
 * (docs/benchmarks.md, "Ten rounds for 3x365").
 *
 * Environment: C connections (8), ROUNDS before and after (5), MID: `all1` (the 1x365
 * floor, rest and graphql requests, as the bench's 1x365 rows), `rest1`, `graphql1`, or
 * `all3` (the same three at 3x365, the control). Uses the bench database (bench-database.ts).
 */
import autocannon from 'autocannon';
import { BENCH_KEY, BENCH_SERVER_URL, benchServiceEnv, ensureBenchDatabase } from './bench-database.js';
import { cpuUs, median, servicePort, startChild, startFloor } from './processes.js';
import { SHAPES, targetsFor, type Target } from './shapes.js';

const CONNECTIONS = Number(process.env.C ?? 8);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const MID = process.env.MID ?? 'all1';

const db = await ensureBenchDatabase(BENCH_SERVER_URL, (line) => process.stderr.write(`${line}\n`));
const env = benchServiceEnv(db);
// The service answers GraphQL here, so the floor's sessions run the GraphQL statement too, as in the bench.
const floor = await startFloor(env, true);
const service = await startChild('src/main.ts', env, servicePort);
try {
  const ports = { floor: floor.port, service: service.port };
  const shape = (name: string) => SHAPES.find((s) => s.name === name)!;
  const [floor3, rest3, graphql3] = targetsFor(shape('3x365'), db.lastDay, db.projectIds, ports, BENCH_KEY) as [Target, Target, Target];
  const [floor1, rest1, graphql1] = targetsFor(shape('1x365'), db.lastDay, db.projectIds, ports, BENCH_KEY) as [Target, Target, Target];
  const middle = ({ all1: [floor1, rest1, graphql1], rest1: [rest1], graphql1: [graphql1], all3: [floor3, rest3, graphql3] } as Record<string, Target[]>)[MID];
  if (middle === undefined) throw new Error(`unknown MID ${MID}; expected all1, rest1, graphql1 or all3`);
  const load = (t: Target, seconds: number) => autocannon({ url: t.url, method: t.method, headers: t.headers, body: t.body, connections: CONNECTIONS, duration: seconds });
  const mainThread = `/proc/${service.process.pid}/task/${service.process.pid}/stat`;

  const rounds = async (label: string) => {
    const floorRps: number[] = [];
    const restRps: number[] = [];
    const restMain: number[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      await load(floor3, 1);
      floorRps.push((await load(floor3, 4)).requests.average);
      await load(rest3, 1);
      const before = cpuUs(mainThread);
      const rest = await load(rest3, 4);
      restRps.push(rest.requests.average);
      restMain.push((cpuUs(mainThread) - before) / rest.requests.total);
      await load(graphql3, 3);
    }
    const [f, r] = [median(floorRps), median(restRps)];
    console.log(`${label.padEnd(22)} floor ${f.toFixed(0).padStart(5)} req/s  rest ${r.toFixed(0).padStart(5)} req/s  ${(r / f).toFixed(3)}x  rest main thread ${median(restMain).toFixed(0)} µs/request  (rounds: ${restRps.map((x, i) => (x / floorRps[i]!).toFixed(2)).join(' ')})`);
  };

  for (const t of [floor3, rest3, graphql3]) await load(t, 2); // warm-up, not counted
  console.log(`3x365 REST against the floor at ${CONNECTIONS} connections, ${ROUNDS} rounds of 4 s, medians`);
  await rounds('before');
  for (const t of middle) await load(t, 10);
  await rounds(`after 10 s of ${MID}`);
} finally {
  await Promise.all([floor.stop(), service.stop()]);
}
