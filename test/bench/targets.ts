/**
 * The bench's targets (docs/performance.md, "Targets"), judged on one run's
 * figures, so `npm run bench` ends by saying which it met. Each is judged on unrounded
 * ratios: 0.9496 is printed as 0.950 and is not ≥ 0.95. A target whose rows the run did
 * not measure (`--quick`, `--shape`, `--targets`) says so rather than passing.
 */

/** A row of the bench's table, as far as the targets read it. */
export interface MeasuredRow {
  shape: string;
  connections: number;
  target: string;
  rps: number;
  p50: number;
  p99: number;
}

/** One run's figures: the table's rows, and the 76x3650 growth on a fresh service at 8 connections. */
export interface RunFigures {
  rows: readonly MeasuredRow[];
  /**
   * MB of peak RSS growth by target (`rest`, `graphql`, and `floor` for reference); absent when the memory runs were
   * left out.
   */
  freshGrowthMb: Readonly<Record<string, number>>;
}

export interface Verdict {
  target: string;
  /** The figures it was judged on, in words. */
  figures: string;
  /** Undefined when the run did not measure it. */
  met: boolean | undefined;
}

/** REST's throughput and latency line, and GraphQL's, at 3x365 (the issue's). */
export const REST_LINE = 0.95;
export const GRAPHQL_LINE = 0.6;
/** p99 at most this times the floor's, both APIs, 3x365. */
export const P99_LINE = 1.5;
/** Answers from the response cache at least this times the floor's rate. */
export const HOT_LINE = 2;
/** 76x3650: p50 at most this times the floor's. */
export const LARGE_P50_LINE = 1.1;
/** 76x3650: peak RSS growth of a fresh service at 8 connections, MB. */
export const LARGE_GROWTH_LINE_MB = 64;

/** Every target, judged on `figures`. */
export function judgeTargets(figures: RunFigures): Verdict[] {
  const { rows } = figures;
  const find = (shape: string, connections: number, target: string) =>
    rows.find((r) => r.shape === shape && r.connections === connections && r.target === target);
  /** `pick(target row) / pick(floor row)` at each connection count; undefined when a row is missing. */
  const ratios = (shape: string, counts: readonly number[], target: string, pick: (r: MeasuredRow) => number) => {
    const found = counts.map((c) => {
      const row = find(shape, c, target);
      const floor = find(shape, c, 'floor');
      return row === undefined || floor === undefined ? undefined : pick(row) / pick(floor);
    });
    return found.includes(undefined) ? undefined : (found as number[]);
  };
  const verdicts: Verdict[] = [];
  for (const [api, line] of [
    ['rest', REST_LINE],
    ['graphql', GRAPHQL_LINE],
  ] as const) {
    const rate = ratios('3x365', [8, 32], api, (r) => r.rps);
    const p99 = ratios('3x365', [8, 32], api, (r) => r.p99);
    verdicts.push(
      judged(
        `${api === 'rest' ? 'REST' : 'GraphQL'} ≥ ${line}× the floor's req/s, ` +
          `p99 ≤ ${P99_LINE}× its p99 (3x365, 8 and 32 connections)`,
        rate === undefined || p99 === undefined ? undefined : { rate, p99 },
        ({ rate: r, p99: p }) => `req/s ${list(r)}× the floor's, p99 ${list(p)}×`,
        ({ rate: r, p99: p }) => r.every((x) => x >= line) && p.every((x) => x <= P99_LINE),
      ),
    );
  }
  const hot = ['rest-hot', 'graphql-hot'].map((name) => ratios('3x365', [8, 32], name, (r) => r.rps));
  verdicts.push(
    judged(
      `answers from the cache ≥ ${HOT_LINE}× the floor's req/s, both APIs (3x365, 8 and 32 connections)`,
      hot.includes(undefined) ? undefined : (hot as number[][]),
      ([rest, graphql]) => `rest-hot ${list(rest!)}×, graphql-hot ${list(graphql!)}×`,
      (both) => both.flat().every((x) => x >= HOT_LINE),
    ),
  );
  const large = ['rest', 'graphql'].map((name) => ratios('76x3650', [1, 8, 32], name, (r) => r.p50));
  verdicts.push(
    judged(
      `76x3650 p50 ≤ ${LARGE_P50_LINE}× the floor's, both APIs (1, 8 and 32 connections)`,
      large.includes(undefined) ? undefined : (large as number[][]),
      ([rest, graphql]) => `REST ${list(rest!)}×, GraphQL ${list(graphql!)}×`,
      (both) => both.flat().every((x) => x <= LARGE_P50_LINE),
    ),
  );
  const growth = ['rest', 'graphql'].map((name) => figures.freshGrowthMb[name]);
  const floorGrowth = figures.freshGrowthMb.floor;
  verdicts.push(
    judged(
      `76x3650 peak RSS growth ≤ ${LARGE_GROWTH_LINE_MB} MB on a fresh service, both APIs (8 connections)`,
      growth.includes(undefined) ? undefined : (growth as number[]),
      ([rest, graphql]) =>
        `REST ${rest!.toFixed(1)} MB, GraphQL ${graphql!.toFixed(1)}` +
        ` MB${floorGrowth === undefined ? '' : ` (the floor on a fresh process ${floorGrowth.toFixed(1)} MB)`}`,
      (both) => both.every((mb) => mb <= LARGE_GROWTH_LINE_MB),
    ),
  );
  return verdicts;
}

/** `targets:` and a line per verdict, as the bench prints them. */
export function formatVerdicts(verdicts: readonly Verdict[]): string {
  const word = (met: boolean | undefined) => (met === undefined ? 'not measured in this run' : met ? 'met' : 'NOT MET');
  return [
    'targets:',
    ...verdicts.map((v) => `  ${v.target}: ${v.figures === '' ? '' : `${v.figures}: `}${word(v.met)}`),
  ].join('\n');
}

// Private

function judged<T>(
  target: string,
  values: T | undefined,
  describe: (values: T) => string,
  meets: (values: T) => boolean,
): Verdict {
  if (values === undefined) return { target, figures: '', met: undefined };
  return { target, figures: describe(values), met: meets(values) };
}

/** `0.971 and 0.951`, or `0.98, 1.03 and 0.90` for three. */
function list(values: readonly number[]): string {
  const text = values.map((v) => v.toFixed(3));
  return text.length < 2 ? text.join('') : `${text.slice(0, -1).join(', ')} and ${text.at(-1)}`;
}
