import { removePoints, upsertPoints } from '../../src/db/write-points.js';
import type { TestService } from './service.js';

/** One point to write: a value, or null to remove the day. */
export type PointWrite = [metric: string, slug: string, day: string, value: number | null];

/** Writes `points` in one transaction through the import's write path (one commit, one write time). */
export async function commit(service: TestService, points: readonly PointWrite[]): Promise<void> {
  const { store, state } = service.running.services;
  const id = (metric: string, slug: string) => state.directory!.idOf(metric, slug)!;
  await store.transaction(async (tx) => {
    const values = points.filter((p) => p[3] !== null);
    const removed = points.filter((p) => p[3] === null);
    await upsertPoints(
      tx,
      values.map(([metric, slug, day, value]) => ({ projectId: id(metric, slug), day, value: value!, extra: null })),
    );
    await removePoints(
      tx,
      removed.map(([metric, slug, day]) => ({ projectId: id(metric, slug), day })),
    );
  });
}

/** Creates a hook over REST with the test key unless `key` says otherwise; returns its JSON. */
export async function createHook(
  service: TestService,
  body: Record<string, unknown>,
  key?: string,
): Promise<{ id: string; secret: string; cursor: string } & Record<string, unknown>> {
  const res = await service.get('/v1/hooks', {
    method: 'POST',
    key,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { id: string; secret: string; cursor: string };
  if (res.status !== 201) throw new Error(`hook not created: ${res.status} ${JSON.stringify(json)}`);
  return json;
}
