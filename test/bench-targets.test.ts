import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  formatVerdicts,
  GRAPHQL_LINE,
  HOT_LINE,
  judgeTargets,
  LARGE_GROWTH_LINE_MB,
  LARGE_P50_LINE,
  P99_LINE,
  REST_LINE,
  type MeasuredRow,
} from './bench/targets.js';

/**
 * The bench's verdicts (test/bench/targets.ts) on made-up runs: each target is met only
 * when every figure it names is on the right side of its line, judged unrounded, and a
 * run that left its rows out says so instead of passing.
 */
describe('bench targets', () => {
  /** A whole run's rows: the floor at 1000 req/s, p50 100 ms and p99 10 ms, each target at the given multiples. */
  function run(multiples: {
    rest?: number;
    restP99?: number;
    graphql?: number;
    hot?: number;
    largeP50?: number;
  }): MeasuredRow[] {
    const rows: MeasuredRow[] = [];
    for (const connections of [8, 32]) {
      rows.push({ shape: '3x365', connections, target: 'floor', rps: 1000, p50: 1, p99: 10 });
      rows.push({
        shape: '3x365',
        connections,
        target: 'rest',
        rps: 1000 * (multiples.rest ?? 1),
        p50: 1,
        p99: 10 * (multiples.restP99 ?? 1),
      });
      rows.push({
        shape: '3x365',
        connections,
        target: 'graphql',
        rps: 1000 * (multiples.graphql ?? 0.7),
        p50: 1,
        p99: 10,
      });
      for (const target of ['rest-hot', 'graphql-hot'])
        rows.push({ shape: '3x365', connections, target, rps: 1000 * (multiples.hot ?? 9), p50: 0, p99: 1 });
    }
    for (const connections of [1, 8, 32]) {
      rows.push({ shape: '76x3650', connections, target: 'floor', rps: 10, p50: 100, p99: 200 });
      for (const target of ['rest', 'graphql'])
        rows.push({ shape: '76x3650', connections, target, rps: 10, p50: 100 * (multiples.largeP50 ?? 1), p99: 200 });
    }
    return rows;
  }
  const growth = { rest: 60, graphql: 50 };
  const met = (rows: MeasuredRow[], freshGrowthMb: Record<string, number> = growth) =>
    judgeTargets({ rows, freshGrowthMb }).map((v) => v.met);

  it('meets every target when every figure is on its side of the line, the lines themselves included', () => {
    expect(
      met(run({ rest: 0.95, restP99: 1.5, graphql: 0.6, hot: 2, largeP50: 1.1 }), { rest: 64, graphql: 64 }),
    ).toEqual([true, true, true, true, true]);
  });

  it('judges REST on both connection counts, unrounded: 0.9496 is under 0.95 though printed as 0.950', () => {
    const rows = run({});
    rows.find((r) => r.shape === '3x365' && r.connections === 32 && r.target === 'rest')!.rps = 949.6;
    const [rest] = judgeTargets({ rows, freshGrowthMb: growth });
    expect(rest).toEqual({
      target: "REST ≥ 0.95× the floor's req/s, p99 ≤ 1.5× its p99 (3x365, 8 and 32 connections)",
      figures: "req/s 1.000 and 0.950× the floor's, p99 1.000 and 1.000×",
      met: false,
    });
  });

  it('fails REST on its p99 alone, and each other target on its own figure alone', () => {
    expect(met(run({ restP99: 1.51 }))).toEqual([false, true, true, true, true]);
    expect(met(run({ graphql: 0.59 }))).toEqual([true, false, true, true, true]);
    expect(met(run({ hot: 1.99 }))).toEqual([true, true, false, true, true]);
    expect(met(run({ largeP50: 1.11 }))).toEqual([true, true, true, false, true]);
    expect(met(run({}), { rest: 64.1, graphql: 10 })).toEqual([true, true, true, true, false]);
  });

  it('says a target was not measured when the run left its rows out, rather than passing it', () => {
    const quick = run({}).filter((r) => r.shape === '3x365' && r.connections === 8);
    expect(met(quick, {})).toEqual([undefined, undefined, undefined, undefined, undefined]);
    const text = formatVerdicts(judgeTargets({ rows: quick, freshGrowthMb: {} }));
    expect(text.split('\n')).toHaveLength(6);
    expect(text).toMatch(
      /^targets:\n {2}REST ≥ 0\.95× the floor's req\/s, p99 ≤ 1\.5× its p99 \(3x365, 8 and 32 connections\): not measured in this run\n/,
    );
  });

  it('prints each verdict with the figures it was judged on', () => {
    const text = formatVerdicts(
      judgeTargets({ rows: run({ rest: 0.93, largeP50: 0.9 }), freshGrowthMb: { rest: 68, graphql: 50.25 } }),
    );
    expect(text).toContain(
      "REST ≥ 0.95× the floor's req/s, p99 ≤ 1.5× its p99 (3x365, 8 and 32 connections): " +
        "req/s 0.930 and 0.930× the floor's, p99 1.000 and 1.000×: NOT MET",
    );
    expect(text).toContain(
      "76x3650 p50 ≤ 1.1× the floor's, both APIs (1, 8 and 32 connections): " +
        'REST 0.900, 0.900 and 0.900×, GraphQL 0.900, 0.900 and 0.900×: met',
    );
    expect(text).toContain(
      '76x3650 peak RSS growth ≤ 64 MB on a fresh service, both APIs (8 connections): ' +
        'REST 68.0 MB, GraphQL 50.3 MB: NOT MET',
    );
    // The fresh floor's growth is printed beside them, for reference; it is not judged.
    const withFloor = formatVerdicts(
      judgeTargets({ rows: run({}), freshGrowthMb: { rest: 60, graphql: 50, floor: 80 } }),
    );
    expect(withFloor).toContain(
      '(8 connections): REST 60.0 MB, GraphQL 50.0 MB (the floor on a fresh process 80.0 MB): met',
    );
  });

  it('docs/performance.md states the lines the bench judges by, target by target', () => {
    const doc = readFileSync(new URL('../docs/performance.md', import.meta.url), 'utf8');
    const section = doc.slice(doc.indexOf('\n## Targets\n'), doc.indexOf('\n## ', doc.indexOf('\n## Targets\n') + 1));
    const lines = [...section.matchAll(/^\| [^|]+ \| ([≤≥] [\d.]+(?: MB)?) \|/gm)].map((m) => m[1]);
    expect(lines).toEqual([
      `≥ ${REST_LINE}`,
      `≤ ${P99_LINE}`,
      `≥ ${GRAPHQL_LINE}`,
      `≥ ${HOT_LINE}`,
      `≤ ${LARGE_P50_LINE}`,
      `≤ ${LARGE_GROWTH_LINE_MB} MB`,
    ]);
  });
});
