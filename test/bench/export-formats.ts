import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CATALOG } from '../../src/catalog/load-catalog.js';
import { BENCH_KEY } from './bench-database.js';
import { sampleRss, servicePort, startChild } from './processes.js';

/** The formats measured on the service, each on a fresh process. */
const FORMATS = ['csv', 'arrow', 'parquet'] as const;

/** The Parquet writers compared on the same input (parquet-candidate.ts). */
const CANDIDATES = ['hyparquet-writer', 'parquet-wasm'] as const;

/**
 * `npm run bench -- --shape export`: the full export (every metric with all its projects,
 * one export per metric as a project list must suit every metric of one export) in each
 * format, on a fresh service each: time, bytes and the service's peak RSS growth. Then the
 * Parquet writers compared alone, each in a fresh process, on the Arrow stream of the same
 * export: time and peak RSS growth of the writing itself.
 */
export async function measureExports(env: Record<string, string>, log: (line: string) => void): Promise<string[]> {
  const lines: string[] = [];
  const dir = await mkdtemp(join(tmpdir(), 'metrics-bench-export-'));
  try {
    for (const format of FORMATS) {
      const fresh = await startChild('src/main.ts', env, servicePort);
      try {
        const before = fresh.rss();
        const sampler = sampleRss(fresh);
        const started = Date.now();
        let bytes = 0;
        const statuses = new Set<number>();
        for (const [i, metric] of CATALOG.metrics.entries()) {
          const res = await fetch(
            `http://127.0.0.1:${fresh.port}/v1/export?metric=${metric.name}` +
              `&project=${metric.projects.join(',')}&format=${format}`,
            { headers: { 'x-api-key': BENCH_KEY } },
          );
          statuses.add(res.status);
          const kept: Uint8Array[] = [];
          for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
            bytes += chunk.byteLength;
            if (format === 'arrow') kept.push(chunk);
          }
          if (format === 'arrow') await writeFile(join(dir, `${i}.arrow`), kept);
        }
        const seconds = (Date.now() - started) / 1000;
        const growth = (sampler.stop() - before) / 2 ** 20;
        lines.push(
          `export of every metric, project and day as ${format}, ${CATALOG.metrics.length} exports: ` +
            `statuses ${[...statuses].join(' ')}, ${(bytes / 2 ** 20).toFixed(1)} MB in ${seconds.toFixed(1)} s, ` +
            `service peak RSS growth ${growth.toFixed(1)} MB`,
        );
        log(lines.at(-1)!);
      } finally {
        await fresh.stop();
      }
    }
    const files = CATALOG.metrics.map((_, i) => join(dir, `${i}.arrow`));
    for (const candidate of CANDIDATES) {
      const result = await runCandidate(candidate, files);
      lines.push(
        `Parquet writer ${candidate} alone, the full export from its Arrow stream: ${result.rows} rows, ` +
          `${(result.bytes / 2 ** 20).toFixed(1)} MB in ${result.seconds.toFixed(1)} s, peak RSS growth ` +
          `${result.peakGrowthMb.toFixed(1)} MB`,
      );
      log(lines.at(-1)!);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return lines;
}

// Private

interface CandidateResult {
  rows: number;
  bytes: number;
  seconds: number;
  peakGrowthMb: number;
}

/** Runs parquet-candidate.ts in a fresh process and reads its one JSON line. */
async function runCandidate(candidate: string, files: string[]): Promise<CandidateResult> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/bench/parquet-candidate.ts', candidate, ...files], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    out += String(chunk);
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`parquet-candidate ${candidate} exited with ${code}`);
  return JSON.parse(out) as CandidateResult;
}
