import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commit, createHook } from './support/hook-writes.js';
import { startReceiver, type HookReceiver } from './support/hook-receiver.js';
import { until } from './support/poll.js';
import { startTestService, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

const PRICE = 'token-price-usd';

/** The fields of an event a test states by hand. */
function brief(event: Record<string, unknown>) {
  const { rule, type, project, date, value, previousValue } = event;
  return { rule, type, project, date, value, previousValue };
}

describe.each(STORE_KINDS)('webhook deliveries on $name', (kind) => {
  let service: TestService;
  let receiver: HookReceiver;
  beforeAll(async () => {
    service = await startTestService(kind, {
      HOOKS_ALLOW_PRIVATE: 'on',
      HOOKS_RETRY_BASE_SECONDS: '0.05',
      METRICS: 'public',
    });
    receiver = await startReceiver();
  }, 120_000);
  afterAll(async () => {
    await service?.stop();
    await receiver?.close();
  });

  it('fires each rule exactly when it should, one signed delivery per commit, in order', async () => {
    await commit(service, [[PRICE, 'ethereum', '2026-06-30', 100]]);
    const hook = await createHook(service, {
      url: receiver.url,
      filter: { metrics: [PRICE], projects: ['ethereum'] },
      rules: [{ type: 'landed' }, { type: 'revision', minAbsPercent: 10 }, { type: 'threshold', op: '>', value: 1000 }],
    });
    await commit(service, [[PRICE, 'ethereum', '2026-07-01', 500]]); // landed
    await commit(service, [[PRICE, 'ethereum', '2026-07-01', 520]]); // +4 %: nothing
    await commit(service, [[PRICE, 'ethereum', '2026-07-01', 1500]]); // revision, crosses 1000
    await commit(service, [[PRICE, 'ethereum', '2026-07-02', 2000]]); // landed; the day before is over already
    await commit(service, [
      [PRICE, 'ethereum', '2026-07-02', 900], // revision, falls under
      [PRICE, 'ethereum', '2026-07-03', 1200], // landed, crosses from the 900 of the same commit
    ]);
    await commit(service, [[PRICE, 'ethereum', '2026-07-03', null]]); // removed: a revision
    await commit(service, [[PRICE, 'arbitrum', '2026-07-01', 5000]]); // another series: nothing

    const expected = [
      [{ rule: 0, type: 'landed', project: 'ethereum', date: '2026-07-01', value: 500, previousValue: null }],
      [
        { rule: 1, type: 'revision', project: 'ethereum', date: '2026-07-01', value: 1500, previousValue: 520 },
        { rule: 2, type: 'threshold', project: 'ethereum', date: '2026-07-01', value: 1500, previousValue: 520 },
      ],
      [{ rule: 0, type: 'landed', project: 'ethereum', date: '2026-07-02', value: 2000, previousValue: null }],
      [
        { rule: 1, type: 'revision', project: 'ethereum', date: '2026-07-02', value: 900, previousValue: 2000 },
        { rule: 0, type: 'landed', project: 'ethereum', date: '2026-07-03', value: 1200, previousValue: null },
        { rule: 2, type: 'threshold', project: 'ethereum', date: '2026-07-03', value: 1200, previousValue: 900 },
      ],
      [{ rule: 1, type: 'revision', project: 'ethereum', date: '2026-07-03', value: null, previousValue: 1200 }],
    ];
    const mine = () => receiver.received.filter((r) => JSON.parse(r.body).hook === hook.id);
    await until('five deliveries', () => mine().length >= 5);
    // Nothing more comes: the eighth commit is another series, the third fired no rule.
    const deliveries = await until('every delivery recorded as delivered', async () => {
      const page = (await (await service.get(`/v1/hooks/${hook.id}/deliveries`)).json()) as {
        deliveries: { state: string; attempts: number; id: string }[];
      };
      return page.deliveries.every((d) => d.state === 'delivered') && page.deliveries;
    });
    expect(deliveries).toHaveLength(5);
    expect(deliveries.every((d) => d.attempts === 1)).toBe(true);
    expect(mine()).toHaveLength(5);
    const bodies = mine().map((r) => JSON.parse(r.body) as { events: Record<string, unknown>[]; cursor: string });
    expect(bodies.map((b) => b.events.map(brief))).toEqual(expected);
    expect(bodies.flatMap((b) => b.events).every((e) => e.metric === PRICE)).toBe(true);
    // Signed as Standard Webhooks has it: the reference library verifies every one.
    const verified = receiver.verifiedEvents(hook.secret).filter((e) => e.project === 'ethereum');
    expect(verified.map(brief)).toEqual(expected.flat());
    expect(() =>
      receiver.verifiedEvents(`whsec_${Buffer.from('another secret, 24 bytes').toString('base64')}`),
    ).toThrow();
    // Each body's id header is its delivery's, newest first in the list.
    expect(mine().map((r) => r.headers['webhook-id'])).toEqual(deliveries.map((d) => d.id).reverse());
  });

  it('replays every event after a cursor, and since an instant, in order', async () => {
    const hooks = (await (await service.get('/v1/hooks')).json()) as { hooks: { id: string; secret: string }[] };
    const id = hooks.hooks[0]!.id;
    const mine = () => receiver.received.filter((r) => JSON.parse(r.body).hook === id).map((r) => JSON.parse(r.body));
    const before = mine();
    const fromCursor = before[2].cursor as string; // after the third delivery
    const res = await service.get(`/v1/hooks/${id}/replay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ cursor: fromCursor }),
    });
    expect(res.status).toBe(202);
    await until('the last two deliveries again', () => mine().length >= 7);
    expect(
      mine()
        .slice(5)
        .map((b) => b.events),
    ).toEqual(before.slice(3).map((b) => b.events));

    const since = before[3].events[0].updatedAt as string; // the fourth delivery's commit
    const again = await service.get(`/v1/hooks/${id}/replay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ since }),
    });
    expect(again.status).toBe(202);
    await until('the last two deliveries once more', () => mine().length >= 9);
    expect(
      mine()
        .slice(7)
        .map((b) => b.events),
    ).toEqual(before.slice(3).map((b) => b.events));
  });

  it('fires a late rule once per series and day, by the schedule and grace on the service clock', async () => {
    // The clock reads 2026-06-30 after 12:00 UTC: with expectedBy 02:00 and 600 minutes of grace,
    // 2026-06-29 is due; with a day's grace, 2026-06-28 is the latest due, and it has landed.
    await commit(service, [[PRICE, 'solana', '2026-06-29', null]]);
    const late = await startReceiver();
    try {
      const due = await createHook(service, {
        url: late.url,
        filter: { metrics: [PRICE], projects: ['solana'] },
        rules: [{ type: 'late', graceMinutes: 600 }],
      });
      const notDue = await createHook(service, {
        url: late.url,
        filter: { metrics: [PRICE], projects: ['solana'] },
        rules: [{ type: 'late', graceMinutes: 1440 }],
      });
      const worker = service.running.services.hooks;
      await worker.checkLate();
      await worker.checkLate();
      await until('the late event', () => late.received.length >= 1);
      const dueDeliveries = async (id: string) =>
        ((await (await service.get(`/v1/hooks/${id}/deliveries`)).json()) as { deliveries: unknown[] }).deliveries;
      await until('the late delivery recorded', async () => (await dueDeliveries(due.id)).length === 1);
      expect(await dueDeliveries(notDue.id)).toEqual([]);
      expect(late.received).toHaveLength(1);
      const events = late.verifiedEvents(due.secret);
      expect(events.map(brief)).toEqual([
        { rule: 0, type: 'late', project: 'solana', date: '2026-06-29', value: null, previousValue: null },
      ]);
    } finally {
      await late.close();
    }
  });

  it('retries a receiver that is down, then delivers every event in order', async () => {
    const down = await startReceiver();
    try {
      down.status = 503;
      const hook = await createHook(service, {
        url: down.url,
        filter: { metrics: [PRICE], projects: ['fogo'] },
        rules: [{ type: 'landed' }],
      });
      for (const day of ['2026-07-01', '2026-07-02', '2026-07-03']) await commit(service, [[PRICE, 'fogo', day, 1]]);
      await until('three refused attempts', () => down.received.length >= 3);
      // In order: nothing behind the first delivery is tried while it fails.
      expect(new Set(down.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
      down.status = 200;
      await until('every event', () => down.verifiedEvents(hook.secret).length === 3);
      expect(down.verifiedEvents(hook.secret).map((e) => e.date)).toEqual(['2026-07-01', '2026-07-02', '2026-07-03']);
      const { deliveries } = (await (await service.get(`/v1/hooks/${hook.id}/deliveries`)).json()) as {
        deliveries: { attempts: number; state: string; lastStatus: number }[];
      };
      await until('all recorded', async () => {
        const page = (await (await service.get(`/v1/hooks/${hook.id}/deliveries`)).json()) as {
          deliveries: { state: string }[];
        };
        return page.deliveries.every((d) => d.state === 'delivered');
      });
      expect(deliveries.at(-1)!.attempts).toBeGreaterThanOrEqual(4);
      const metrics = await (await service.get('/metrics', { key: null })).text();
      expect(metrics).toMatch(/metrics_hook_deliveries_total\{outcome="retried"\} [1-9]/);
      expect(metrics).toMatch(/metrics_hook_deliveries_total\{outcome="delivered"\} [1-9]/);
    } finally {
      await down.close();
    }
  });
});

describe('a delivery that keeps failing', () => {
  let service: TestService;
  let receiver: HookReceiver;
  beforeAll(async () => {
    service = await startTestService(STORE_KINDS[0]!, {
      HOOKS_ALLOW_PRIVATE: 'on',
      HOOKS_RETRY_BASE_SECONDS: '0.05',
      HOOKS_FAIL_AFTER_HOURS: '0.0003', // about a second
      METRICS: 'public',
    });
    receiver = await startReceiver();
  }, 120_000);
  afterAll(async () => {
    await service?.stop();
    await receiver?.close();
  });

  it('is failed after HOOKS_FAIL_AFTER_HOURS, and the hook goes on with later events', async () => {
    receiver.status = 500;
    const hook = await createHook(service, {
      url: receiver.url,
      filter: { metrics: [PRICE], projects: ['ethereum'] },
      rules: [{ type: 'landed' }],
    });
    await commit(service, [[PRICE, 'ethereum', '2026-07-01', 1]]);
    const page = async () =>
      (
        (await (await service.get(`/v1/hooks/${hook.id}/deliveries`)).json()) as {
          deliveries: { state: string; attempts: number; lastStatus: number | null; nextAttemptAt: string | null }[];
        }
      ).deliveries;
    const [failed] = await until('the delivery failed', async () => (await page())[0]?.state === 'failed' && page());
    expect(failed!.lastStatus).toBe(500);
    expect(failed!.nextAttemptAt).toBeNull();
    expect(failed!.attempts).toBe(receiver.received.length);
    receiver.status = 200;
    await commit(service, [[PRICE, 'ethereum', '2026-07-02', 2]]);
    await until('the next event delivered', () => receiver.verifiedEvents(hook.secret).length === 1);
    expect(receiver.verifiedEvents(hook.secret)[0]!.date).toBe('2026-07-02');
    const metrics = await (await service.get('/metrics', { key: null })).text();
    expect(metrics).toMatch(/metrics_hook_deliveries_total\{outcome="failed"\} 1\b/);
  });
});
