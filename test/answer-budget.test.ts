import { describe, expect, it } from 'vitest';
import { CancelledError } from '../src/db/store.js';
import { ClientGone } from '../src/http/client-gone.js';
import { createAnswerBudget } from '../src/limits/answer-budget.js';

/** Whether a promise has settled after everything queued so far has run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => {
    done = true;
  });
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('answer budget', () => {
  it('grants reservations that fit at once and holds the next one until bytes come back', async () => {
    const budget = createAnswerBudget(100);
    const first = await budget.reserve(60);
    const second = budget.reserve(50);
    expect(await settled(second)).toBe(false);
    expect(budget.inUse).toBe(60);
    first();
    expect(await settled(second)).toBe(true);
    expect(budget.inUse).toBe(50);
    (await second)();
    expect(budget.inUse).toBe(0);
  });

  it('serves waiters in arrival order: a small one does not pass a large one queued before it', async () => {
    const budget = createAnswerBudget(100);
    const held = await budget.reserve(90);
    const large = budget.reserve(80);
    const small = budget.reserve(5);
    expect(await settled(small)).toBe(false);
    held();
    expect(await settled(large)).toBe(true);
    expect(await settled(small)).toBe(true);
    expect(budget.inUse).toBe(85);
  });

  it('runs a reservation larger than the whole budget alone rather than never', async () => {
    const budget = createAnswerBudget(100);
    const huge = await budget.reserve(1_000);
    expect(budget.inUse).toBe(100);
    const next = budget.reserve(1);
    expect(await settled(next)).toBe(false);
    huge();
    expect(await settled(next)).toBe(true);
  });

  it('gives bytes back once however often release is called', async () => {
    const budget = createAnswerBudget(100);
    const release = await budget.reserve(40);
    await budget.reserve(30);
    release();
    release();
    expect(budget.inUse).toBe(30);
  });

  it('drops a waiter whose client leaves: it is never granted, and the next in line is', async () => {
    const budget = createAnswerBudget(100);
    const held = await budget.reserve(60);
    const gone = new ClientGone();
    const abandoned = budget.reserve(50, gone).catch((error: unknown) => error);
    const next = budget.reserve(50);
    expect(budget.waiting).toBe(2);
    gone.abort();
    expect(await abandoned).toBeInstanceOf(CancelledError);
    expect(budget.waiting).toBe(1);
    expect(await settled(next)).toBe(false);
    held();
    expect(await settled(next)).toBe(true);
    expect(budget.inUse).toBe(50);
    expect(budget.waiting).toBe(0);
  });

  it('lets a smaller waiter in at once when a larger one ahead of it leaves', async () => {
    const budget = createAnswerBudget(100);
    await budget.reserve(60);
    const gone = new ClientGone();
    const large = budget.reserve(80, gone).catch((error: unknown) => error);
    const small = budget.reserve(30);
    expect(await settled(small)).toBe(false);
    gone.abort();
    expect(await large).toBeInstanceOf(CancelledError);
    expect(await settled(small)).toBe(true);
    expect(budget.inUse).toBe(90);
  });

  it(
    'refuses a reservation whose client has already left, and a granted one ' + 'is unaffected by a later leave',
    async () => {
      const budget = createAnswerBudget(100);
      const left = new ClientGone();
      left.abort();
      await expect(budget.reserve(10, left)).rejects.toBeInstanceOf(CancelledError);
      expect(budget.inUse).toBe(0);
      const later = new ClientGone();
      const release = await budget.reserve(40, later);
      later.abort();
      expect(budget.inUse).toBe(40);
      release();
      expect(budget.inUse).toBe(0);
    },
  );
});
