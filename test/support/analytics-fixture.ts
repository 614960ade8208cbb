import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CATALOG } from '../../src/catalog/load-catalog.js';
import { importFile } from '../../src/import/import-files.js';
import type { DailyPoint } from './reference-series.js';
import { startTestService, type TestService } from './service.js';
import type { StoreKind } from './stores.js';

/** The venues of the `major-cex` group, in the group's order. */
export const VENUES = ['binance', 'coinbase', 'okx', 'bybit', 'Upbit', 'kraken'] as const;

/**
 * A test service whose volume-usd data has what totals and rankings must handle: gaps
 * (binance 10–12 June 2026, okx 11 June), a series that stops (kraken after 25 June),
 * series that start on different days (the seed's), a tie (coinbase's days of 1–25
 * June copied from kraken), and zeros (Upbit 27–31 May). `asOf` is an instant after those writes and before a revision
 * (binance 1–5 June become 1, okx 15 June removed), so as-of answers differ from current ones.
 */
export interface AnalyticsFixture {
  svc: TestService;
  asOf: string;
  /** A metric's projects' whole daily histories, as the plain REST answer gives them (as of an instant). */
  daily(metric: string, projects: readonly string[], asOf?: string): Promise<Map<string, DailyPoint[]>>;
  stop(): Promise<void>;
}

export async function startAnalyticsFixture(kind: StoreKind): Promise<AnalyticsFixture> {
  const svc = await startTestService(kind);
  const dir = await mkdtemp(join(tmpdir(), 'metrics-analytics-'));
  const load = async (name: string, rows: string[]) => {
    await writeFile(join(dir, name), `metric,project,date,value\n${rows.join('\n')}\n`);
    const result = await importFile(svc.running.services.store, CATALOG, join(dir, name));
    if (!result.ok) throw new Error(`import of ${name} failed`);
  };
  const daily: AnalyticsFixture['daily'] = async (metric, projects, asOf) => {
    const query = new URLSearchParams({ project: projects.join(',') });
    if (asOf !== undefined) query.set('as_of', asOf);
    const res = await svc.get(`/v1/metrics/${metric}?${query}`);
    if (res.status !== 200) throw new Error(`daily ${metric}: ${res.status} ${await res.text()}`);
    const body = (await res.json()) as Record<string, DailyPoint[]>;
    return new Map(projects.map((slug) => [slug, body[slug]!.map((p) => ({ date: p.date, value: p.value }))]));
  };
  const kraken = (await daily('volume-usd', ['kraken'])).get('kraken')!;
  const june = kraken.filter((p) => p.date >= '2026-06-01' && p.date <= '2026-06-25');
  await load('edits.csv', [
    ...['10', '11', '12'].map((d) => `volume-usd,binance,2026-06-${d},`),
    'volume-usd,okx,2026-06-11,',
    ...['26', '27', '28', '29', '30'].map((d) => `volume-usd,kraken,2026-06-${d},`),
    ...june.map((p) => `volume-usd,coinbase,${p.date},${p.value}`),
    ...['27', '28', '29', '30', '31'].map((d) => `volume-usd,Upbit,2026-05-${d},0`),
  ]);
  await new Promise((resolve) => setTimeout(resolve, 20));
  const asOf = new Date().toISOString();
  await new Promise((resolve) => setTimeout(resolve, 20));
  await load('revision.csv', [
    ...['01', '02', '03', '04', '05'].map((d) => `volume-usd,binance,2026-06-${d},1`),
    'volume-usd,okx,2026-06-15,',
  ]);
  return {
    svc,
    asOf,
    daily,
    stop: async () => {
      await svc.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Whether two numbers agree to about 12 significant digits (the service computes in exact numeric). */
export function near(actual: number | null, expected: number | null): boolean {
  if (actual === null || expected === null) return actual === expected;
  return Math.abs(actual - expected) <= 1e-9 * Math.max(1, Math.abs(expected));
}
