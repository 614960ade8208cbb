import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';
import { ApiError } from '../api/api-error.js';

/**
 * `GET /metrics` with WORKERS > 1. Each worker counts only what it served, and the primary
 * hands a scrape's connection to any worker, so a worker answering alone would show a
 * share of the instance's figures (half, with two), and another share at the next scrape.
 * So a worker asks the primary, which gathers every worker's registry through prom-client's
 * AggregatorRegistry (counters and histograms summed, a gauge by the `aggregator` it names)
 * and answers with the instance's text.
 */

/** In a worker: lets the primary read `registry`, and returns how to ask it for the whole instance's text. */
export function shareWithPrimary(registry: Registry): () => Promise<string> {
  AggregatorRegistry.setRegistries([registry]);
  new AggregatorRegistry(); // its constructor is what makes this worker answer the primary's reads
  const waiting = new Map<number, (answer: GatherAnswer) => void>();
  let next = 0;
  process.on('message', (message: unknown) => {
    if (isMessage<GatherAnswer>(message, GATHERED)) waiting.get(message.id)?.(message);
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(
        () => settle({ kind: GATHERED, id, error: 'the primary did not answer' }),
        GATHER_TIMEOUT_MS,
      );
      const settle = (answer: GatherAnswer) => {
        clearTimeout(timer);
        waiting.delete(id);
        if (answer.body !== undefined) resolve(answer.body);
        else
          reject(
            new ApiError('unavailable', 'the figures of the other workers could not be gathered; try again', {
              cause: new Error(answer.error),
            }),
          );
      };
      waiting.set(id, settle);
      process.send?.({ kind: GATHER, id } satisfies GatherRequest);
    });
}

/** In the primary: answers each worker's request for the instance's text. */
export function gatherForWorkers(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker: Worker, message: unknown) => {
    if (!isMessage<GatherRequest>(message, GATHER)) return;
    const reply = (answer: Omit<GatherAnswer, 'kind' | 'id'>) => {
      if (worker.isConnected()) worker.send({ kind: GATHERED, id: message.id, ...answer } satisfies GatherAnswer);
    };
    aggregator.clusterMetrics().then(
      (body) => reply({ body }),
      (error: Error) => reply({ error: error.message }),
    );
  });
}

// Private

const GATHER = 'metrics:gather';
const GATHERED = 'metrics:gathered';
/** prom-client gives up on a silent worker after 5 s; a little longer here, so its error comes through. */
const GATHER_TIMEOUT_MS = 6_000;

interface GatherRequest {
  kind: typeof GATHER;
  id: number;
}

interface GatherAnswer {
  kind: typeof GATHERED;
  id: number;
  body?: string;
  error?: string;
}

function isMessage<T extends { kind: string }>(message: unknown, kind: T['kind']): message is T {
  return typeof message === 'object' && message !== null && (message as { kind?: unknown }).kind === kind;
}
