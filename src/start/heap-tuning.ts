import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old generation grow past the live heap before a full collection,
 * in percent: 300 makes the limit four times the live heap instead of about twice.
 *
 * Why: V8 counts the buffers allocated since the last full collection against that
 * limit, and every read from a socket allocates one. A server reading about 45 KB of
 * points per request went through the default headroom every 200 requests or so and
 * marked its whole heap (about 23 MB of code and schema) several times a second: about a
 * third of the process's CPU, most of it on V8's helper threads. With this setting it
 * collects about five times less often, for at most about 70 MB more memory in the
 * worst case (docs/performance.md, "Garbage collection").
 */
export const HEAP_GROWING_PERCENT = 300;

/** Applies {@link HEAP_GROWING_PERCENT}; called first thing by every serving process (the bench's floor too). */
export function tuneHeap(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
