/** How long {@link until} waits unless told: long enough for a loaded machine, short beside a test's timeout. */
export const UNTIL_MS = 10_000;

/**
 * Resolves with `check`'s first truthy answer, asking again every `everyMs`; throws, naming
 * `what` (a function is asked for it then), once `withinMs` have passed without one. For what
 * a test must see happen, so a wait never gives up silently.
 */
export async function until<T>(
  what: string | (() => string),
  check: () => T | Promise<T>,
  { withinMs = UNTIL_MS, everyMs = 20 }: { withinMs?: number; everyMs?: number } = {},
): Promise<Truthy<T>> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const last = await check();
    if (last) return last as Truthy<T>;
    if (Date.now() > deadline) {
      throw new Error(`${typeof what === 'string' ? what : what()}: not within ${withinMs} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

// Private

/** What a truthy answer of type `T` can be. */
type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>;
