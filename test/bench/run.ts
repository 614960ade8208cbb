/**
 * `npm run bench [-- --quick]`: the service's REST and GraphQL endpoints measured side
 * by side with the floor (node:http + postgres.js passing PostgreSQL-built JSON through),
 * interleaved in one run on the same database. Prints a table, the peak RSS growth of
 * the largest shape, each target of docs/performance.md met or not (targets.ts), and last
 * the line `ratios: rest/floor=X graphql/floor=Y`.
 */
import autocannon from 'autocannon';
import { writeFileSync, mkdirSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { CATALOG } from '../../src/catalog/load-catalog.js';
import { BENCH_KEY, BENCH_SERVER_URL, benchServiceEnv, ensureBenchDatabase } from './bench-database.js';
import { measureExports } from './export-formats.js';
import { measureAnalytics } from './analytics.js';
import { measureFeed } from './feed.js';
import { measureRevisions } from './revisions.js';
import { measureFormula } from './formula-bench.js';
import { pairedLoad, type PairedResult } from './paired-load.js';
import { sampleRss, servicePort, startChild, startFloor, type Child } from './processes.js';
import { SHAPES, type Shape, type Target, targetsFor } from './shapes.js';
import { formatVerdicts, judgeTargets, type MeasuredRow } from './targets.js';

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    workers: { type: 'string' },
    shape: { type: 'string' },
    // Diagnosis: only these targets in the rotation (e.g. floor,rest), and no two-instance row.
    targets: { type: 'string' },
    // Diagnosis: the graphql row served by a second service process, so the rest row's
    // process serves REST alone (docs/performance.md, "GraphQL beside REST in one process").
    'graphql-apart': { type: 'boolean', default: false },
  },
  strict: true,
});
const QUICK = args.quick === true;
const ONLY_TARGETS = args.targets?.split(',');
/** Rounds and their length in `--quick`; seconds of untimed load before the first round at each connection count. */
const QUICK_ROUNDS = 5;
const QUICK_SECONDS = 3;
const WARMUP_SECONDS = 2;
/** Pairs of slices and a slice's length for the paired 3x365 figures (paired-load.ts). */
const PAIRS = 24;
const SLICE_MS = 250;
/** Seconds of a target's own load, untimed, just before each of its timed runs. */
const LEAD_IN_SECONDS = 1;
const log = (line: string) => process.stderr.write(`${line}\n`);

/** A row of the table: what the targets read (targets.ts), and the rest it prints. */
interface Row extends MeasuredRow {
  errors: number;
  non2xx: number;
  /** Status codes other than 200 seen, if any. */
  statuses: string;
  bytes: number;
  peakRssGrowthMb?: number;
}

if (QUICK)
  log(
    `--quick: only 3 projects x 365 days at 8 connections, a warm-up of ${WARMUP_SECONDS} ` +
      `s then ${QUICK_ROUNDS} rounds of ${QUICK_SECONDS} s per target (floor, ` +
      `rest, graphql, rest-hot and graphql-hot through the response cache, and ` +
      `rest on two instances); no memory runs`,
  );
const db = await ensureBenchDatabase(BENCH_SERVER_URL, log);
// The export in every format and the Parquet writers compared (export-formats.ts), alone.
if (args.shape === 'export') {
  for (const line of await measureExports(benchServiceEnv(db), log)) console.log(line);
  process.exit(0);
}
// The service runs as deployed (request logs at info level); only the rate limit is lifted,
// and the response cache is off: the rest and graphql rows measure the series path, since
// the bench repeats one request. A second service with the cache on gives the hot rows.
const env = { ...benchServiceEnv(db), ...(args.workers ? { WORKERS: args.workers } : {}) };
const hotEnv = { ...env, RESPONSE_CACHE_MB: '64' };
// The service's database sessions run the GraphQL statement when the same process answers
// the graphql row; the floor's sessions then run it too, so both have the same history
// (floor-server.ts, docs/performance.md "What a session ran before").
const graphqlOnServicePool = !args['graphql-apart'] && (ONLY_TARGETS === undefined || ONLY_TARGETS.includes('graphql'));
const floor = await startFloor(env, graphqlOnServicePool);
const service = await startChild('src/main.ts', env, servicePort);
const hot = await startChild('src/main.ts', hotEnv, servicePort);
const graphqlApart = args['graphql-apart'] ? await startChild('src/main.ts', env, servicePort) : undefined;
// A second floor, the same program in another process, measured against the first in
// paired slices beside REST: how far two identical servers differ is the method's own error.
const withPaired = ONLY_TARGETS === undefined && (args.shape ?? '3x365') === '3x365';
const floorTwo = withPaired ? await startFloor(env, graphqlOnServicePool) : undefined;

const rows: Row[] = [];
const pairedLines: string[] = [];
try {
  const only = args.shape ?? (QUICK ? '3x365' : undefined);
  const shapes = SHAPES.filter((s) => only === undefined || s.name === only);
  for (const shape of shapes) {
    const connectionCounts = QUICK ? [8] : shape.connections;
    for (const connections of connectionCounts) {
      const targets = targetsFor(
        shape,
        db.lastDay,
        db.projectIds,
        { floor: floor.port, service: service.port },
        BENCH_KEY,
      );
      if (shape.name === '3x365') {
        const [, rest, graphql] = targetsFor(
          shape,
          db.lastDay,
          db.projectIds,
          { floor: floor.port, service: hot.port },
          BENCH_KEY,
        );
        targets.push({ ...rest!, name: 'rest-hot' }, { ...graphql!, name: 'graphql-hot' });
      }
      if (graphqlApart !== undefined) {
        const [, , graphql] = targetsFor(
          shape,
          db.lastDay,
          db.projectIds,
          { floor: floor.port, service: graphqlApart.port },
          BENCH_KEY,
        );
        targets[targets.findIndex((t) => t.name === 'graphql')] = graphql!;
      }
      if (ONLY_TARGETS !== undefined)
        targets.splice(0, targets.length, ...targets.filter((t) => ONLY_TARGETS.includes(t.name)));
      await sleep(2_000); // let requests still running from the previous shape finish
      const reference = await fetchPoints(targets[0]!, shape);
      for (const target of targets) {
        if (JSON.stringify(await fetchPoints(target, shape)) !== JSON.stringify(reference)) {
          throw new Error(`${target.name} returned other points than the floor for ${shape.name}`);
        }
      }
      // A first pass at this load, not counted: the service's code is compiled by V8 and its
      // heap grown by the first requests, and a cold first round was 10-15% slower than the rest.
      for (const target of targets) await load(target, connections, WARMUP_SECONDS);
      // Rounds alternate the targets so drift on the machine hits all alike, each round
      // starting one target further on, so every target takes every place in turn. What ran
      // just before a target changed its figure (the floor was faster right after the
      // cache-hot rows), and the rotation keeps each target's predecessor the same in all
      // but one round, so each timed run follows a second of its own load, untimed.
      const runs = new Map<string, Row[]>(targets.map((t) => [t.name, []]));
      for (let round = 0; round < roundsOf(shape); round += 1) {
        const order = targets.map((_, i) => targets[(i + round) % targets.length]!);
        for (const target of order) {
          await load(target, connections, LEAD_IN_SECONDS);
          runs.get(target.name)!.push(await measure(target, shape, connections));
        }
        log(
          `  round ${round + 1}: ${order.map((t) => `${t.name} ${runs.get(t.name)!.at(-1)!.rps.toFixed(0)}`).join(', ')}`,
        );
      }
      for (const target of targets) {
        const row = medianRow(runs.get(target.name)!);
        rows.push(row);
        log(formatRow(row));
      }
      if (shape.name === '3x365' && floorTwo !== undefined) {
        const [floorTarget, rest] = targets;
        const [other] = targetsFor(shape, db.lastDay, db.projectIds, { floor: floorTwo.port, service: 0 }, BENCH_KEY);
        pairedLines.push(await pairedLine(connections, floorTarget!, rest!, { ...other!, name: 'floor' }));
        log(pairedLines.at(-1)!);
      }
    }
  }
  // Two instances of the service on the same machine and database, each taking half the
  // connections: what scaling out gives when both share these two cores.
  if (ONLY_TARGETS === undefined && (args.shape === undefined || args.shape === '3x365')) {
    const second = await startChild('src/main.ts', env, servicePort);
    try {
      const shape = SHAPES.find((s) => s.name === '3x365')!;
      const [, one] = targetsFor(
        shape,
        db.lastDay,
        db.projectIds,
        { floor: floor.port, service: service.port },
        BENCH_KEY,
      );
      const [, two] = targetsFor(
        shape,
        db.lastDay,
        db.projectIds,
        { floor: floor.port, service: second.port },
        BENCH_KEY,
      );
      const runs: Row[] = [];
      await Promise.all([one!, two!].map((t) => load(t, 4, WARMUP_SECONDS)));
      for (let round = 0; round < roundsOf(shape); round += 1) {
        const halves = await Promise.all([one!, two!].map((t) => load(t, 4, secondsOf(shape))));
        runs.push({
          shape: shape.name,
          connections: 8,
          target: 'rest-2-instances',
          rps: halves[0]!.requests.average + halves[1]!.requests.average,
          p50: Math.max(halves[0]!.latency.p50, halves[1]!.latency.p50),
          p99: Math.max(halves[0]!.latency.p99, halves[1]!.latency.p99),
          errors: halves.reduce((n, h) => n + h.errors + h.timeouts, 0),
          non2xx: halves.reduce((n, h) => n + h.non2xx, 0),
          statuses: '',
          bytes: Math.round(halves[0]!.throughput.total / Math.max(1, halves[0]!.requests.total)),
        });
      }
      const row = medianRow(runs);
      rows.push(row);
      log(formatRow(row));
    } finally {
      await second.stop();
    }
  }
} finally {
  await Promise.all([floor.stop(), service.stop(), hot.stop(), graphqlApart?.stop(), floorTwo?.stop()]);
}

// Memory of the largest answer, on fresh processes so no earlier run's heap hides it: the
// floor's first (a fresh floor of its own, beside which the service's figures read), then
// the service's REST and GraphQL on one fresh service.
const memoryLines: string[] = [];
/** MB of peak RSS growth at 8 connections on a fresh process, by target (`floor`, `rest`, `graphql`). */
const freshGrowthMb: Record<string, number> = {};
if (!QUICK && (args.shape === undefined || args.shape === '76x3650')) {
  const fresh = [
    { start: () => startFloor(env, false), names: ['floor'], what: 'floor on a fresh process' },
    {
      start: () => startChild('src/main.ts', env, servicePort),
      names: ['rest', 'graphql'],
      what: 'on a fresh service',
    },
  ];
  for (const { start, names, what } of fresh) {
    const probe = await start();
    try {
      const ports = { floor: probe.port, service: probe.port };
      const largest = targetsFor(
        SHAPES.find((s) => s.name === '76x3650')!,
        db.lastDay,
        db.projectIds,
        ports,
        BENCH_KEY,
      );
      const small = targetsFor(SHAPES[1]!, db.lastDay, db.projectIds, ports, BENCH_KEY);
      // The same 3 s of the 3x365 request first, through the floor's URL or REST's.
      const warm = small[names[0] === 'floor' ? 0 : 1]!;
      await autocannon({ url: warm.url, headers: warm.headers, connections: 8, duration: 3 });
      for (const target of largest.filter((t) => names.includes(t.name))) {
        for (const connections of [1, 8]) {
          const before = probe.rss();
          const sampler = sampleRss(probe);
          const result = await autocannon({
            url: target.url,
            method: target.method,
            headers: target.headers,
            body: target.body,
            connections,
            duration: 8,
          });
          const growth = (sampler.stop() - before) / 2 ** 20;
          if (connections === 8) freshGrowthMb[target.name] = growth;
          const label = target.name === 'floor' ? what : `${target.name} ${what}`;
          memoryLines.push(
            `76x3650 ${label}, ${connections} connection(s): ${result.requests.total} ` +
              `answers of ${(result.throughput.total / Math.max(1, result.requests.total) / 2 ** 20).toFixed(1)} ` +
              `MB, RSS ${(before / 2 ** 20).toFixed(0)} MB before, peak growth ${growth.toFixed(1)} ` +
              `MB`,
          );
          log(memoryLines.at(-1)!);
        }
      }
    } finally {
      await probe.stop();
    }
  }
}

// Shaped views and the bulk export, on a fresh service (no floor does these): a monthly
// view of 76 projects over the whole history, and every metric, project and day exported.
const viewLines: string[] = [];
if (!QUICK && (args.shape === undefined || args.shape === 'views')) {
  const fresh = await startChild('src/main.ts', env, servicePort);
  try {
    const shape = SHAPES.find((s) => s.name === '76x3650')!;
    const [, rest, graphql] = targetsFor(
      shape,
      db.lastDay,
      db.projectIds,
      { floor: floor.port, service: fresh.port },
      BENCH_KEY,
    );
    const monthlyRest = { ...rest!, url: `${rest!.url}&interval=month` };
    const monthlyGraphql = { ...graphql!, body: graphql!.body!.replace('to: $to)', 'to: $to, interval: MONTH)') };
    for (const [name, target] of [
      ['rest', monthlyRest],
      ['graphql', monthlyGraphql],
    ] as const) {
      const check = await fetch(target.url, { method: target.method, headers: target.headers, body: target.body });
      const size = (await check.arrayBuffer()).byteLength;
      if (check.status !== 200) throw new Error(`monthly ${name} answered ${check.status}`);
      const result = await autocannon({
        url: target.url,
        method: target.method,
        headers: target.headers,
        body: target.body,
        connections: 8,
        duration: 6,
      });
      viewLines.push(
        `monthly 76x3650 ${name}, 8 connections: ${result.requests.average.toFixed(0)} ` +
          `req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, ${size} ` +
          `bytes per answer, non-2xx ${result.non2xx}`,
      );
      log(viewLines.at(-1)!);
    }
    for (const line of await measureFormula(
      db.url,
      db.lastDay,
      { floor: floor.port, service: fresh.port },
      BENCH_KEY,
    )) {
      viewLines.push(line);
      log(line);
    }
    // One export per metric with all its projects (a project list must suit every metric of one export).
    const before = fresh.rss();
    const sampler = sampleRss(fresh);
    const started = Date.now();
    let bytes = 0;
    let rowsSeen = 0;
    const statuses = new Set<number>();
    for (const metric of CATALOG.metrics) {
      const res = await fetch(
        `http://127.0.0.1:${fresh.port}/v1/export?metric=${metric.name}` +
          `&project=${metric.projects.join(',')}&format=csv`,
        { headers: { 'x-api-key': BENCH_KEY } },
      );
      statuses.add(res.status);
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        bytes += chunk.byteLength;
        for (const b of chunk) if (b === 10) rowsSeen += 1;
      }
      rowsSeen -= 1; // the header line
    }
    const growth = (sampler.stop() - before) / 2 ** 20;
    viewLines.push(
      `export of every metric, project and day as CSV, ${CATALOG.metrics.length} ` +
        `exports: statuses ${[...statuses].join(' ')}, ${rowsSeen} rows, ${(bytes / 2 ** 20).toFixed(1)} ` +
        `MB in ${((Date.now() - started) / 1000).toFixed(1)} s, service peak RSS ` +
        `growth ${growth.toFixed(1)} MB`,
    );
    log(viewLines.at(-1)!);
  } finally {
    await fresh.stop();
  }
}

// The changes feed on a long log (feed.ts): an empty page must cost no more than a full one.
const feedLines: string[] = [];
if (!QUICK && (args.shape === undefined || args.shape === 'feed')) {
  feedLines.push(await measureFeed(BENCH_SERVER_URL, env, log));
  log(feedLines.at(-1)!);
}

// Vintages, triangles and profiles over a year of revisions (revisions.ts): reported, not gating.
if (!QUICK && (args.shape === undefined || args.shape === 'revisions')) {
  feedLines.push(...(await measureRevisions(BENCH_SERVER_URL, env, log)));
}

// Totals and rankings across the 76 issuers, each beside the floor reading the same raw rows (analytics.ts).
if (!QUICK && (args.shape === undefined || args.shape === 'analytics')) {
  viewLines.push(...(await measureAnalytics(env, db, log)));
}

const report = [
  `| shape | conns | target | req/s | × floor | p50 ms | p99 ms | errors | non-2xx | bytes/resp | peak RSS growth MB |`,
  `|---|---|---|---|---|---|---|---|---|---|---|`,
  ...rows.map((r) => {
    const floorRps =
      rows.find((f) => f.shape === r.shape && f.connections === r.connections && f.target === 'floor')?.rps ?? NaN;
    const non2xx = r.non2xx === 0 ? '0' : `${r.non2xx} (${r.statuses})`;
    return (
      `| ${r.shape} | ${r.connections} | ${r.target} | ${r.rps.toFixed(0)} | ${(r.rps / floorRps).toFixed(2)} ` +
      `| ${r.p50} | ${r.p99} | ${r.errors} | ${non2xx} | ${r.bytes} | ${r.peakRssGrowthMb?.toFixed(1) ?? ''} ` +
      `|`
    );
  }),
].join('\n');
const ratio = (target: string, connections: number) => {
  const of = (name: string) =>
    rows.find((r) => r.shape === '3x365' && r.connections === connections && r.target === name)?.rps ?? NaN;
  return (of(target) / of('floor')).toFixed(2);
};
const ratiosAt32 = QUICK
  ? ''
  : ` (32 connections: rest/floor=${ratio('rest', 32)} graphql/floor=${ratio('graphql', 32)})`;
const summary =
  `ratios: rest/floor=${ratio('rest', 8)} graphql/floor=${ratio('graphql', 8)} ` +
  `rest-hot/floor=${ratio('rest-hot', 8)} graphql-hot/floor=${ratio('graphql-hot', 8)}`;
const verdicts = formatVerdicts(judgeTargets({ rows, freshGrowthMb }));
mkdirSync('.data', { recursive: true });
writeFileSync(
  `.data/bench-${args.shape ?? (QUICK ? 'quick' : 'full')}.md`,
  `${report}\n\n${[...pairedLines, ...memoryLines, ...viewLines].join('\n')}` +
    `\n\n${verdicts}\n\n${summary}${ratiosAt32}\n`,
);
console.log(`\n${report}\n`);
for (const line of [...pairedLines, ...memoryLines, ...viewLines, ...feedLines]) console.log(line);
console.log(`\n${verdicts}\n`);
if (!QUICK) console.log(`3x365 at 32 connections:${ratiosAt32}`);
console.log(summary);

// Private

/**
 * REST and a second floor, each against the floor in paired slices (paired-load.ts), on
 * the processes the rotation just measured: a second estimate of REST × floor that drift
 * between rounds does not reach, beside the same method's figure for two identical servers.
 */
async function pairedLine(
  connections: number,
  floorTarget: Target,
  rest: Target,
  floorTwoTarget: Target,
): Promise<string> {
  const options = { connections, pairs: PAIRS, sliceMs: SLICE_MS };
  // the second floor's first answers
  await pairedLoad(floorTarget, floorTwoTarget, { ...options, pairs: 2, sliceMs: 500 });
  const describe = (result: PairedResult) => {
    const pairs = [...result.pairRatios].sort((a, b) => a - b);
    return (
      `${(result.rps[1] / result.rps[0]).toFixed(3)} (${result.rps[0].toFixed(0)} ` +
      `and ${result.rps[1].toFixed(0)} req/s; pairs ${pairs[0]!.toFixed(2)}-${pairs.at(-1)!.toFixed(2)})`
    );
  };
  const restResult = await pairedLoad(floorTarget, rest, options);
  const control = await pairedLoad(floorTarget, floorTwoTarget, options);
  return (
    `3x365 c=${connections} paired slices (${PAIRS} pairs of ${SLICE_MS} ms): ` +
    `rest × floor ${describe(restResult)}; second floor × floor ${describe(control)}`
  );
}

async function measure(target: Target, shape: Shape, connections: number): Promise<Row> {
  const child: Child = target.name === 'floor' ? floor : target.name.endsWith('-hot') ? hot : service;
  // Memory is sampled only where it is reported: reading /proc 40 times a second is work
  // on the same two cores.
  const rssBefore = shape.trackMemory ? child.rss() : 0;
  const sampler = shape.trackMemory ? sampleRss(child) : undefined;
  const result = await load(target, connections, secondsOf(shape));
  const peak = sampler?.stop() ?? 0;
  return {
    shape: shape.name,
    connections,
    target: target.name,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    statuses: Object.keys(result.statusCodeStats ?? {})
      .filter((code) => code !== '200')
      .join(' '),
    bytes: Math.round(result.throughput.total / Math.max(1, result.requests.total)),
    ...(shape.trackMemory ? { peakRssGrowthMb: (peak - rssBefore) / 2 ** 20 } : {}),
  };
}

function load(
  target: Pick<Target, 'url' | 'method' | 'headers' | 'body'>,
  connections: number,
  seconds: number,
): Promise<autocannon.Result> {
  return autocannon({
    url: target.url,
    method: target.method,
    headers: target.headers,
    body: target.body,
    connections,
    duration: seconds,
  });
}

function roundsOf(shape: Shape): number {
  return QUICK ? QUICK_ROUNDS : shape.rounds;
}

function secondsOf(shape: Shape): number {
  return QUICK ? QUICK_SECONDS : shape.seconds;
}

/** The median of each figure over the rounds (errors are summed, memory growth is the worst). */
function medianRow(runs: Row[]): Row {
  const median = (pick: (r: Row) => number) => {
    const sorted = runs.map(pick).sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  };
  const first = runs[0]!;
  return {
    ...first,
    rps: median((r) => r.rps),
    p50: median((r) => r.p50),
    p99: median((r) => r.p99),
    errors: runs.reduce((n, r) => n + r.errors, 0),
    non2xx: runs.reduce((n, r) => n + r.non2xx, 0),
    statuses: [...new Set(runs.flatMap((r) => r.statuses.split(' ').filter(Boolean)))].join(' '),
    ...(first.peakRssGrowthMb === undefined
      ? {}
      : { peakRssGrowthMb: Math.max(...runs.map((r) => r.peakRssGrowthMb ?? 0)) }),
  };
}

function formatRow(r: Row): string {
  return (
    `${r.shape.padEnd(8)} c=${String(r.connections).padEnd(3)} ${r.target.padEnd(8)} ${r.rps.toFixed(0).padStart(6)} ` +
    (`req/s  p50 ${r.p50} ms  p99 ${r.p99} ms  errors ${r.errors}` +
      (` non2xx ${r.non2xx} ${r.statuses}` +
        `${r.peakRssGrowthMb === undefined ? '' : `  peak RSS +${r.peakRssGrowthMb.toFixed(1)} MB`}`))
  );
}

/** Before timing: the target answers 200; its points are compared with the floor's. */
async function fetchPoints(target: Target, shape: Shape): Promise<Record<string, unknown>> {
  const res = await fetch(target.url, { method: target.method, headers: target.headers, body: target.body });
  const text = await res.text();
  if (res.status !== 200)
    throw new Error(`${target.name} answered ${res.status} for ${shape.name}: ${text.slice(0, 300)}`);
  return target.pointsOf(text);
}
