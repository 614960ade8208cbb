/**
 * `--import ./test/bench/ballast.mjs` with BALLAST_MB=N: keeps about N MB of small live
 * objects in the process for its whole life, as a service's code, schema and catalog are,
 * so the floor can be measured with a heap of the service's size (paired-probe.ts,
 * FLOOR2_BALLAST_MB).
 */
const megabytes = Number(process.env.BALLAST_MB ?? 0);
// About 150 bytes of heap per entry (an object, a short string and a one-element array): BALLAST_MB=11 keeps about 16 MB.
globalThis.__ballast = Array.from({ length: Math.round((megabytes * 2 ** 20) / 100) }, (_, i) => ({ id: i, name: `entry-${i}`, tags: [i] }));
