/**
 * Preloaded by memory-probe.ts with BUFFERS=1 (`node --expose-gc --import …`): every
 * second, the bytes the process holds in ArrayBuffers (socket reads, the driver's rows,
 * answers being written), then the same right after a full collection. The first is what
 * RSS carries; the second is what was still in use. Appends `time-ms before after` (bytes)
 * lines to $BUFFER_LOG.
 */
import { appendFileSync } from 'node:fs';

const file = process.env.BUFFER_LOG;
if (file !== undefined && typeof globalThis.gc === 'function') {
  setInterval(() => {
    const before = process.memoryUsage().arrayBuffers;
    globalThis.gc();
    appendFileSync(file, `${Date.now()} ${before} ${process.memoryUsage().arrayBuffers}\n`);
  }, 1000).unref();
}
