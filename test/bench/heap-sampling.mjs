/**
 * Loaded into a benched process with `NODE_OPTIONS=--import=<this file>` by alloc-probe.ts:
 * the first SIGUSR2 starts V8's sampling heap profiler counting every allocation, the ones
 * collected since included (so the profile is what was allocated, not what is still
 * live); the second writes the profile to HEAP_SAMPLING_OUT.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const session = new Session();
session.connect();
const post = (method, params) => new Promise((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));

let sampling = false;
process.on('SIGUSR2', () => {
  if (sampling) {
    void post('HeapProfiler.stopSampling').then(({ profile }) => {
      writeFileSync(process.env.HEAP_SAMPLING_OUT, JSON.stringify(profile));
      process.stderr.write('heap sampling written\n');
    });
    return;
  }
  sampling = true;
  void post('HeapProfiler.enable')
    .then(() => post('HeapProfiler.startSampling', { samplingInterval: 8192, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true }))
    .then(() => process.stderr.write('heap sampling started\n'));
});
