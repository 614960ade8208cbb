import { CATALOG, toGraphqlName } from '../../src/catalog/load-catalog.js';
import { migrate } from '../../src/db/migrate.js';
import { syncCatalog } from '../../src/db/sync-catalog.js';
import type { Store } from '../../src/db/store.js';
import { projectId } from './project-id.js';
import { startTestService, type TestService } from './service.js';
import type { StoreKind } from './stores.js';
import { writeAt, type DayWrites } from './timed-writes.js';

/**
 * A small series with a known revision history, written before the service starts on a
 * store holding nothing else (so no sample data). Four days of staking-apy for one project:
 *
 * | write | at (UTC)            | D1 03-01 | D2 03-02 | D3 03-03 | D4 03-04 |
 * |-------|---------------------|----------|----------|----------|----------|
 * | W1    | 2026-03-02 10:00    | 100      | 200      |          |          |
 * | W2    | 2026-03-03 09:00    | 110      |          | 300      |          |
 * | W3    | 2026-03-05 12:00    | 132      | 150      |          |          |
 * | W4    | 2026-03-09 08:00    |          |          | removed  | 400      |
 * | W5    | 2026-03-12 00:00    |          | 180      |          |          |
 */
export const SCENARIO_METRIC = 'staking-apy';
export const SCENARIO_SLUG = CATALOG.byName.get(SCENARIO_METRIC)!.projects[0]!;
export const SCENARIO_ENUM = toGraphqlName(SCENARIO_SLUG);
export const [D1, D2, D3, D4] = ['2026-03-01', '2026-03-02', '2026-03-03', '2026-03-04'];

export const SCENARIO_WRITES: readonly { at: string; days: DayWrites }[] = [
  { at: '2026-03-02T10:00:00Z', days: { [D1]: 100, [D2]: 200 } },
  { at: '2026-03-03T09:00:00Z', days: { [D1]: 110, [D3]: 300 } },
  { at: '2026-03-05T12:00:00Z', days: { [D1]: 132, [D2]: 150 } },
  { at: '2026-03-09T08:00:00Z', days: { [D3]: null, [D4]: 400 } },
  { at: '2026-03-12T00:00:00Z', days: { [D2]: 180 } },
];

/** A service over a store that holds the scenario, what `more` writes, and nothing else. */
export async function startScenarioService(
  kind: StoreKind,
  more?: (store: Store) => Promise<void>,
): Promise<TestService> {
  const prepared = await kind.open();
  await migrate(prepared.store);
  await syncCatalog(prepared.store, CATALOG);
  const id = await projectId(prepared.store, SCENARIO_METRIC, SCENARIO_SLUG);
  for (const { at, days } of SCENARIO_WRITES) await writeAt(prepared.store, at, id, days);
  await more?.(prepared.store);
  return startTestService(kind, {}, { store: prepared });
}
