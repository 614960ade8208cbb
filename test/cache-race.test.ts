import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ColumnText, Store } from '../src/db/store.js';
import { upsertPoints } from '../src/db/write-points.js';
import { projectId } from './support/project-id.js';
import { heard, startTestService, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

/**
 * A read that races a write: a request whose points were read before a write was announced
 * may answer with the data it read (it began first), but its answer must not be kept, so
 * the next request shows the write. The response cache drops its entries when the
 * announcement arrives; an answer still in flight then must not be put back.
 */

const DAY = '2026-06-15';
const WRITTEN = 31_337.25;
const PATH = '/v1/metrics/token-price-usd?project=ethereum&start_date=2026-06-10&end_date=2026-06-20';
const QUERY = `{ metric(name: token_price_usd, projects: [ethereum], from: "2026-06-11", to: "2026-06-19") {
  series { slug points { date value } } } }`;

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`a read racing a write on ${kind.name}`, { timeout: 60_000 }, () => {
    const reads = holdingReads();
    let service: TestService;
    let ethereum: number;

    beforeAll(async () => {
      service = await startTestService(kind, {}, { wrapStore: reads.wrap });
      ethereum = await projectId(service.running.services.store, 'token-price-usd', 'ethereum');
    });
    afterAll(async () => {
      await service?.stop();
    });

    /**
     * Sends `request`, holds its series read once the rows are in, writes `value` on DAY and
     * waits for the service to hear it, then lets the read go on; answers with the raced
     * answer's value on DAY and the next answer's.
     */
    const race = async (
      request: () => Promise<Response>,
      valueOnDay: (body: unknown) => number | undefined,
      value: number,
    ) => {
      const held = reads.holdNext();
      const racing = request();
      await held.reached;
      const store = service.running.services.store;
      await heard(service, () => upsertPoints(store, [{ projectId: ethereum, day: DAY, value, extra: null }]));
      held.release();
      const raced = await racing;
      expect(raced.status).toBe(200);
      const next = await request();
      expect(next.status).toBe(200);
      return { raced: valueOnDay(await raced.json()), next: valueOnDay(await next.json()) };
    };

    it('serves a REST write on the next request, not the answer read before it was announced', async () => {
      type Body = { ethereum: { date: string; value: number }[] };
      const onDay = (body: unknown) => (body as Body).ethereum.find((p) => p.date === DAY)?.value;
      const { raced, next } = await race(() => service.get(PATH), onDay, WRITTEN);
      // The raced answer holds what was read before the write: otherwise nothing raced.
      expect(raced).toBeDefined();
      expect(raced).not.toBe(WRITTEN);
      expect(next).toBe(WRITTEN);
    });

    it('serves a GraphQL write on the next request, not the answer read before it was announced', async () => {
      type Body = { data: { metric: { series: { slug: string; points: { date: string; value: number }[] }[] } } };
      const onDay = (body: unknown) => (body as Body).data.metric.series[0]!.points.find((p) => p.date === DAY)?.value;
      const { raced, next } = await race(() => service.graphql(QUERY), onDay, WRITTEN + 1);
      expect(raced).toBeDefined();
      expect(raced).not.toBe(WRITTEN + 1);
      expect(next).toBe(WRITTEN + 1);
    });
  });
}

// Private

/** A store wrapper that can hold the next series read (queryRaw or streamRaw) once its rows are in. */
function holdingReads() {
  let armed: { reached: () => void; gate: Promise<void> } | undefined;
  const hold = async () => {
    const held = armed;
    armed = undefined;
    if (held === undefined) return;
    held.reached();
    await held.gate;
  };
  return {
    /** Arms the hold: `reached` resolves once the next read has its rows; `release` lets it answer. */
    holdNext() {
      let reached!: () => void;
      let release!: () => void;
      const reachedPromise = new Promise<void>((resolve) => (reached = resolve));
      armed = { reached, gate: new Promise<void>((resolve) => (release = resolve)) };
      return { reached: reachedPromise, release };
    },
    wrap: (store: Store): Store => ({
      kind: store.kind,
      description: store.description,
      query: (text, params, signal) => store.query(text, params, signal),
      queryRaw: async (text, params, signal) => {
        const rows = await store.queryRaw(text, params, signal);
        await hold();
        return rows;
      },
      streamRaw: (text, params, batch, signal) =>
        (async function* () {
          const batches: ColumnText[][][] = [];
          for await (const rows of store.streamRaw(text, params, batch, signal)) batches.push(rows);
          await hold();
          yield* batches;
        })(),
      listen: (channel, onMessage, onState) => store.listen(channel, onMessage, onState),
      transaction: (work) => store.transaction(work),
      copyCsv: (table, columns, csv) => store.copyCsv(table, columns, csv),
      exec: (script) => store.exec(script),
      close: () => store.close(),
    }),
  };
}
