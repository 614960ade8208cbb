import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old generation grow past the live heap before a full collection,
 * in percent: 300 makes the limit four times the live heap instead of about twice.
 *
 * Why: V8 counts the buffers allocated since the last full collection against that
 * limit, and every read from a socket allocates one, so a server reading many points per
 * request would mark its whole heap (code and schema) several times a second. Fewer full
 * collections cost some memory at worst (docs/performance.md).
 */
export const HEAP_GROWING_PERCENT = 300;

/** Applies {@link HEAP_GROWING_PERCENT}; called first thing by every serving process (the bench's floor too). */
export function tuneHeap(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
