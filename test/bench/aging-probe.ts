/**
 * `npx tsx test/bench/aging-probe.ts`: does a floor that has served minutes of the bench's
 * load answer slower than one that has not? Two fresh floors (their sessions given the
 * GraphQL statement's history, as in the whole bench) are compared in paired slices
 * (3x365, C connections, PAIRS pairs of 250 ms); then the first alone serves AGE_S
 * seconds (default 240) of the rotation's floor requests (AGE_SHAPES, default 1x365,
 * 3x365 and 30x365, in turn, 8 s each, at 1, 8 and 32 connections; whole turns, so it
 * may run over), and the two are compared again, twice. In the
 * whole bench the rotation's floor has that history and the second floor of the paired
 * lines has not.
 */
import autocannon from 'autocannon';
import { BENCH_KEY, BENCH_SERVER_URL, benchServiceEnv, ensureBenchDatabase } from './bench-database.js';
import { startFloorTarget } from './paired-blocks.js';
import { pairedLoad } from './paired-load.js';
import type { Child } from './processes.js';
import { SHAPES, targetsFor } from './shapes.js';

const CONNECTIONS = Number(process.env.C ?? 8);
const PAIRS = Number(process.env.PAIRS ?? 24);
const AGE_S = Number(process.env.AGE_S ?? 240);
/** The shapes of the ageing load (AGE_SHAPES, default the rotation's three). */
const AGE_SHAPES = (process.env.AGE_SHAPES ?? '1x365,3x365,30x365').split(',');

const db = await ensureBenchDatabase(BENCH_SERVER_URL, (line) => process.stderr.write(`${line}\n`));
const env = benchServiceEnv(db);
const children: Child[] = [];
try {
  const first = await startFloorTarget(children, env, db, true);
  const second = await startFloorTarget(children, env, db, true);
  const compare = async (label: string) => {
    const result = await pairedLoad(first.target, second.target, { connections: CONNECTIONS, pairs: PAIRS, sliceMs: 250 });
    console.log(`${label}: second floor × first ${(result.rps[1] / result.rps[0]).toFixed(3)} (${result.rps[0].toFixed(0)} and ${result.rps[1].toFixed(0)} req/s)`);
  };
  await pairedLoad(first.target, second.target, { connections: CONNECTIONS, pairs: 4, sliceMs: 500 });
  await compare('both fresh');
  const shapes = SHAPES.filter((s) => AGE_SHAPES.includes(s.name));
  const started = Date.now();
  while (Date.now() - started < AGE_S * 1000) {
    for (const connections of [1, 8, 32]) {
      for (const shape of shapes) {
        const [floor] = targetsFor(shape, db.lastDay, db.projectIds, { floor: first.port, service: 0 }, BENCH_KEY);
        await autocannon({ url: floor!.url, connections, duration: 8 });
      }
    }
  }
  await compare(`first floor after ${Math.round((Date.now() - started) / 1000)} s of the rotation's load`);
  await compare('again');
} finally {
  for (const child of children) await child.stop();
}
