import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { fromEpochDay, toEpochDay } from '../src/dates.js';
import type { Queryable } from '../src/db/store.js';
import { createRevisionProfiles, RECOMPUTE_AFTER_MS } from '../src/revisions/revision-profiles.js';
import { projectId } from './support/project-id.js';
import { heard, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';
import { SCENARIO_METRIC, SCENARIO_SLUG, startScenarioService } from './support/revision-scenario.js';
import { writeAt } from './support/timed-writes.js';

/**
 * Revision profiles: the four-day scenario worked out by hand, and a 40-day history of two
 * projects of another metric against a model of its writes computed here.
 */

/** The scenario's profile by hand: writes after the first came 23, 74, 74, 143 (D3's removal) and 230 hours on. */
const SCENARIO_PROFILE = {
  days: 4,
  revisedShare: 0.75,
  medianRevisionDelayHours: 74,
  // Changes 10, 20, 20, 25 %: the 95th percentile interpolates at 2.85 → 20 + 0.85 × 5.
  p95AbsRevisionPercent: 24.25,
  stableAfterDays: null,
};

const METRIC = CATALOG.metrics.find((m) => m.name !== SCENARIO_METRIC && m.projects.length >= 2)!;
const [A, B] = METRIC.projects as [string, string];

/** One write of the 40-day history: a value, or a removal (null). */
interface Write {
  slug: string;
  day: string;
  at: number;
  value: number | null;
}

const HOUR = 3_600_000;
const START = toEpochDay('2026-01-01');

/** A: 40 days, every 4th revised the day after next, every 10th (from the 3rd) five days on, day 37 removed. */
const WRITES: Write[] = [];
for (let i = 0; i < 40; i++) {
  const day = fromEpochDay(START + i);
  const midnight = (START + i) * 86_400_000;
  WRITES.push({ slug: A, day, at: midnight + 26 * HOUR, value: 1000 + i });
  if (i % 4 === 0) WRITES.push({ slug: A, day, at: midnight + 54 * HOUR, value: 1050 + i });
  if (i % 10 === 3) WRITES.push({ slug: A, day, at: midnight + 132 * HOUR, value: 1100 + i });
  if (i === 37) WRITES.push({ slug: A, day, at: midnight + 44 * HOUR, value: null });
  // B: ten days, written late in the day itself, every other one revised three days on.
  if (i < 10) {
    WRITES.push({ slug: B, day, at: midnight + 23 * HOUR, value: 10 + i });
    if (i % 2 === 0) WRITES.push({ slug: B, day, at: midnight + 73 * HOUR, value: 20 + i });
  }
}
WRITES.sort((x, y) => x.at - y.at);

/** The profile the model gives over the days after `lastDay − lookbackDays`. */
function modelProfile(lookbackDays: number) {
  const lastDay = Math.max(...WRITES.map((w) => toEpochDay(w.day)));
  const byDay = new Map<string, Write[]>();
  for (const w of WRITES) {
    if (toEpochDay(w.day) <= lastDay - lookbackDays) continue;
    const key = `${w.slug}|${w.day}`;
    byDay.set(key, [...(byDay.get(key) ?? []), w]);
  }
  const delays: number[] = [];
  const percents: number[] = [];
  const stable: number[] = [];
  let revised = 0;
  for (const writes of byDay.values()) {
    const first = writes[0]!;
    if (writes.length > 1) revised += 1;
    for (let i = 1; i < writes.length; i++) {
      delays.push((writes[i]!.at - first.at) / HOUR);
      const [before, after] = [writes[i - 1]!.value, writes[i]!.value];
      if (before !== null && after !== null && before !== 0) percents.push((Math.abs(after - before) / before) * 100);
    }
    const lastWriteDay = Math.floor(writes.at(-1)!.at / 86_400_000);
    stable.push(Math.max(0, lastWriteDay - toEpochDay(first.day)));
  }
  const days = byDay.size;
  return {
    days,
    revisedShare: revised / days,
    medianRevisionDelayHours: interpolated(delays, 0.5),
    p95AbsRevisionPercent: interpolated(percents, 0.95),
    stableAfterDays: days < 30 ? null : discrete(stable, 0.95),
  };
}

/** PostgreSQL's percentile_cont, written out: linear between the two nearest ranks. */
function interpolated(values: number[], fraction: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const at = fraction * (sorted.length - 1);
  const [lo, hi] = [Math.floor(at), Math.ceil(at)];
  return sorted[lo]! + (at - lo) * (sorted[hi]! - sorted[lo]!);
}

/** PostgreSQL's percentile_disc: the first value whose share of values at or below it reaches `fraction`. */
function discrete(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil(fraction * sorted.length) - 1]!;
}

type Profile = Record<string, number | string | null>;

function expectProfile(actual: Profile, expected: ReturnType<typeof modelProfile> | typeof SCENARIO_PROFILE) {
  for (const [field, value] of Object.entries(expected)) {
    if (value === null) expect(actual[field], field).toBeNull();
    else expect(actual[field] as number, field).toBeCloseTo(value, 9);
  }
}

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`revision profiles on ${kind.name}`, { timeout: 60_000 }, () => {
    let service: TestService;

    const rest = async (metric: string, query = ''): Promise<{ lookbackDays: number; revisionProfile: Profile }> => {
      const res = await service.get(`/v1/metrics/${metric}/profile${query}`);
      expect(res.status, await res.clone().text()).toBe(200);
      const body = (await res.json()) as { metric: string; lookbackDays: number; revisionProfile: Profile };
      expect(body.metric).toBe(metric);
      return body;
    };

    beforeAll(async () => {
      service = await startScenarioService(kind, async (store) => {
        const ids = { [A]: await projectId(store, METRIC.name, A), [B]: await projectId(store, METRIC.name, B) };
        for (const w of WRITES) await writeAt(store, new Date(w.at).toISOString(), ids[w.slug]!, { [w.day]: w.value });
      });
    });
    afterAll(async () => {
      await service?.stop();
    });

    it("measures the scenario's profile as worked out by hand, on both APIs", async () => {
      const body = await rest(SCENARIO_METRIC);
      expect(body.lookbackDays).toBe(180);
      expectProfile(body.revisionProfile, SCENARIO_PROFILE);
      const res = await service.graphql(
        '{ metrics { name revisionProfile { days revisedShare medianRevisionDelayHours ' +
          'p95AbsRevisionPercent stableAfterDays computedAt } } }',
      );
      const data = (await res.json()) as { data: { metrics: { name: string; revisionProfile: Profile }[] } };
      const graphql = data.data.metrics.find((m) => m.name === SCENARIO_METRIC)!.revisionProfile;
      expectProfile(graphql, SCENARIO_PROFILE);
      expect(graphql.computedAt).toBe(body.revisionProfile.computedAt);
    });

    it('measures 40 days of two projects as the model of their writes says, over the window asked', async () => {
      for (const lookback of [180, 30, 7]) {
        const body = await rest(METRIC.name, `?lookback_days=${lookback}`);
        expect(body.lookbackDays).toBe(lookback);
        expectProfile(body.revisionProfile, modelProfile(lookback));
      }
      expect(modelProfile(180).stableAfterDays).not.toBeNull();
      expect(modelProfile(7).stableAfterDays).toBeNull();
      const res = await service.graphql(
        '{ metrics { name revisionProfile(lookbackDays: 30) { days revisedShare medianRevisionDelayHours ' +
          'p95AbsRevisionPercent stableAfterDays } } }',
      );
      const data = (await res.json()) as { data: { metrics: { name: string; revisionProfile: Profile }[] } };
      expectProfile(data.data.metrics.find((m) => m.name === METRIC.name)!.revisionProfile, modelProfile(30));
    });

    it('serves a kept profile until a minute has passed, even after a write to the metric', async () => {
      const first = await rest(SCENARIO_METRIC, '?lookback_days=90');
      expect((await rest(SCENARIO_METRIC, '?lookback_days=90')).revisionProfile.computedAt).toBe(
        first.revisionProfile.computedAt,
      );
      const id = await projectId(service.running.services.store, SCENARIO_METRIC, SCENARIO_SLUG);
      await heard(service, () =>
        writeAt(service.running.services.store, '2026-03-20T00:00:00Z', id, { '2026-03-04': 1 }),
      );
      expect((await rest(SCENARIO_METRIC, '?lookback_days=90')).revisionProfile).toEqual(first.revisionProfile);
    });

    it('refuses a window out of 7–3650 days, naming the parameter', async () => {
      for (const bad of ['6', '3651', 'x', '']) {
        const res = await service.get(`/v1/metrics/${SCENARIO_METRIC}/profile?lookback_days=${bad}`);
        expect(res.status, bad).toBe(400);
        const body = (await res.json()) as { errors: { param: string; message: string }[] };
        expect(body.errors[0]!.param).toBe('lookback_days');
        expect(body.errors[0]!.message).toMatch(/7 to 3650/);
      }
      expect((await service.get('/v1/metrics/no-such-metric/profile')).status).toBe(404);
      const res = await service.graphql('{ metrics { revisionProfile(lookbackDays: 5) { days } } }');
      const body = (await res.json()) as { errors: { message: string; extensions: { code: string } }[] };
      expect(body.errors[0]!.extensions.code).toBe('BAD_USER_INPUT');
      expect(body.errors[0]!.message).toMatch(/7 to 3650/);
    });
  });
}

describe('kept revision profiles', () => {
  /** A store that answers the profile statement and counts how often it was asked. */
  const countingStore = () => {
    const calls = { count: 0 };
    const db = {
      query: async () => {
        calls.count += 1;
        return [{ days: '1', revised: '0', medianHours: null, p95: null, stable: null }];
      },
    } as unknown as Queryable;
    return { db, calls };
  };

  it('computes again after a write, but no more than once a minute', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const profiles = createRevisionProfiles(() => new Date(now));
    const { db, calls } = countingStore();
    profiles.listening(true);
    await profiles.get(db, 'm', [1], 180);
    await profiles.get(db, 'm', [1], 180);
    expect(calls.count).toBe(1);
    now += 2 * RECOMPUTE_AFTER_MS;
    await profiles.get(db, 'm', [1], 180);
    expect(calls.count).toBe(1); // no write: kept however old
    profiles.written('other');
    await profiles.get(db, 'm', [1], 180);
    expect(calls.count).toBe(1);
    profiles.written('m');
    expect(profiles.isKept('m', 180)).toBe(false);
    await profiles.get(db, 'm', [1], 180);
    expect(calls.count).toBe(2);
    profiles.written('m');
    now += RECOMPUTE_AFTER_MS - 1;
    expect(profiles.isKept('m', 180)).toBe(true);
    await profiles.get(db, 'm', [1], 180);
    expect(calls.count).toBe(2);
    now += 1;
    await profiles.get(db, 'm', [1], 180);
    expect(calls.count).toBe(3);
  });

  it('shares one computation between reads that arrive together, and recomputes each minute while deaf', async () => {
    let now = 0;
    const profiles = createRevisionProfiles(() => new Date(now));
    const { db, calls } = countingStore();
    await Promise.all([profiles.get(db, 'm', [1], 30), profiles.get(db, 'm', [1], 30)]);
    expect(calls.count).toBe(1);
    now += RECOMPUTE_AFTER_MS;
    await profiles.get(db, 'm', [1], 30);
    expect(calls.count).toBe(2);
  });
});
