/**
 * `npx tsx test/bench/alloc-probe.ts`: how much memory one answer allocates, and where.
 * For each target (TARGETS, default `rest,graphql`; the 3x365 request) a fresh service
 * (BUILD, dist/src/main.js: `npm run build` first) is warmed by 4 s of load at C
 * connections (default 8), then V8's sampling heap profiler counts every allocation
 * (heap-sampling.mjs) through LOAD_S (default 6) more of the same load. Prints KB
 * allocated per answer in all, by package or source file, and by function (TOP rows each).
 * Young-generation allocation is what drives scavenges and V8's helper threads, which a
 * process serving both APIs shares between them ("GraphQL in the same process",
 * docs/benchmarks.md).
 */
import autocannon from 'autocannon';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BENCH_KEY, BENCH_SERVER_URL, benchServiceEnv, ensureBenchDatabase } from './bench-database.js';
import { servicePort, startChild } from './processes.js';
import { SHAPES, targetsFor, type Target } from './shapes.js';

const CONNECTIONS = Number(process.env.C ?? 8);
const LOAD_S = Number(process.env.LOAD_S ?? 6);
const TOP = Number(process.env.TOP ?? 12);
const BUILD = process.env.BUILD ?? 'dist/src/main.js';
const TARGETS = (process.env.TARGETS ?? 'rest,graphql').split(',');

/** A node of V8's sampling heap profile: a call frame, the bytes sampled in it, its callees. */
interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

const db = await ensureBenchDatabase(BENCH_SERVER_URL, (line) => process.stderr.write(`${line}\n`));
const folder = mkdtempSync(join(tmpdir(), 'alloc-probe-'));
const shape = SHAPES.find((s) => s.name === '3x365')!;
for (const name of TARGETS) {
  const out = join(folder, `${name}.heapprofile`);
  const env = { ...benchServiceEnv(db), NODE_OPTIONS: `--import=${join(import.meta.dirname, 'heap-sampling.mjs')}`, HEAP_SAMPLING_OUT: out };
  const service = await startChild(BUILD, env, servicePort);
  try {
    const target = targetsFor(shape, db.lastDay, db.projectIds, { floor: 0, service: service.port }, BENCH_KEY).find((t) => t.name === name);
    if (target === undefined) throw new Error(`no target ${name}; one of rest, graphql`);
    await load(target, 4);
    service.process.kill('SIGUSR2');
    await sleep(300);
    const answers = (await load(target, LOAD_S)).requests.total;
    service.process.kill('SIGUSR2');
    const head = await readProfile(out);
    report(name, head, answers);
  } finally {
    await service.stop();
  }
}

// Private

function load(target: Target, seconds: number): Promise<autocannon.Result> {
  return autocannon({ url: target.url, method: target.method, headers: target.headers, body: target.body, connections: CONNECTIONS, duration: seconds });
}

/** The profile, once the process has written it (a second or so after the signal). */
async function readProfile(file: string): Promise<ProfileNode> {
  for (let waited = 0; waited < 20_000; waited += 250) {
    try {
      return (JSON.parse(readFileSync(file, 'utf8')) as { head: ProfileNode }).head;
    } catch {
      await sleep(250);
    }
  }
  throw new Error(`no heap profile at ${file}`);
}

function report(name: string, head: ProfileNode, answers: number): void {
  const byPlace = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  const visit = (node: ProfileNode) => {
    const place = placeOf(node.callFrame.url);
    total += node.selfSize;
    byPlace.set(place, (byPlace.get(place) ?? 0) + node.selfSize);
    const fn = `${node.callFrame.functionName || '(anonymous)'} ${place}:${node.callFrame.lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + node.selfSize);
    for (const child of node.children) visit(child);
  };
  visit(head);
  const kb = (bytes: number) => (bytes / answers / 1024).toFixed(2).padStart(7);
  console.log(`${name}: ${answers} answers in ${LOAD_S} s at ${CONNECTIONS} connections, ${kb(total).trim()} KB allocated per answer`);
  for (const [label, table] of [['by package or file', byPlace], ['by function', byFunction]] as const) {
    console.log(`  ${label} (KB per answer):`);
    for (const [key, bytes] of [...table].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`  ${kb(bytes)}  ${key}`);
  }
}

/** A package name, a file of the service, a Node module, or `(native)`. */
function placeOf(url: string): string {
  if (url === '') return '(native)';
  const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (inPackage) return inPackage[1]!;
  const own = /\/(src\/.*)$/.exec(url);
  return own ? own[1]! : url;
}
