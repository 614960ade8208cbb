import cluster from 'node:cluster';
import { Counter, Gauge, Histogram, Registry, type Aggregator } from 'prom-client';
import type { ResponseCache } from '../cache/response-cache.js';
import type { ReplicaState } from '../db/read-replicas.js';
import type { DeliveryOutcomes } from '../hooks/hook-worker.js';
import type { SeriesUpdates } from '../live/series-updates.js';
import type { Outcome } from '../log.js';
import { shareWithPrimary } from './cluster-metrics.js';

/** What the service counts for `GET /metrics`. */
export interface ServiceMetrics {
  /**
   * One request, answered or not: its route pattern (never the raw path), method, status,
   * and how it was cut short when its answer did not reach its end.
   */
  observeRequest(route: string, method: string, status: number, seconds: number, outcome?: Outcome): void;
  /** The Prometheus text exposition of everything counted, and its content type. */
  render(): Promise<{ contentType: string; body: string }>;
}

/**
 * Where the figures read at each scrape come from. A part of the service that has state
 * worth watching adds a source here; it is read only when `/metrics` is asked for.
 */
export interface MetricSources {
  responseCache: ResponseCache;
  seriesUpdates: SeriesUpdates;
  /** Requests being answered now. */
  inFlight: () => number;
  /** Webhook deliveries by outcome since start. */
  hookDeliveries?: (() => Readonly<DeliveryOutcomes>) | undefined;
  /** Whether rate limits are shared through Redis now; absent when no Redis is configured. */
  rateLimitsShared?: (() => boolean) | undefined;
  /** The replicas of DATABASE_READ_URLS and their state; absent when there are none. */
  replicas?: (() => ReplicaState[]) | undefined;
}

/**
 * Request counts and latencies by route and status, rate-limit refusals, the response
 * cache, live subscriptions, replicas and whether rate limits are shared, in a registry
 * of this service's own (prom-client), so two services in one process (tests) do not
 * mix. Labels are route patterns, methods, status codes and configured replicas: a
 * bounded set, whatever the traffic.
 */
export function createServiceMetrics(sources: MetricSources): ServiceMetrics {
  const registry = new Registry();
  const requests = new Counter({
    name: 'metrics_http_requests_total',
    help: 'Requests answered, by route pattern, method and status.',
    labelNames: ['route', 'method', 'status'],
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'metrics_http_request_duration_seconds',
    help: "Time from a request's arrival to the end of its answer, by route pattern.",
    labelNames: ['route'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const cutShort = new Counter({
    name: 'metrics_http_requests_cut_short_total',
    help:
      'Requests whose answer did not reach its end (also counted by status), by route pattern and outcome: ' +
      'aborted (the client left), given up (it stopped reading), failed (an error after the answer began).',
    labelNames: ['route', 'outcome'],
    registers: [registry],
  });
  const refused = new Counter({
    name: 'metrics_rate_limit_rejections_total',
    help: 'Requests refused with 429 by the rate limiter.',
    registers: [registry],
  });
  gauge(registry, 'metrics_http_requests_in_flight', 'Requests being answered now.', sources.inFlight);

  const cache = sources.responseCache;
  total(
    registry,
    'metrics_response_cache_hits_total',
    'Answers served from the response cache.',
    () => cache.stats.hits,
  );
  total(
    registry,
    'metrics_response_cache_misses_total',
    'Cacheable answers read from the database.',
    () => cache.stats.misses,
  );
  total(
    registry,
    'metrics_response_cache_invalidations_total',
    'Times every kept answer was dropped because a write was announced.',
    () => cache.stats.invalidations,
  );
  gauge(registry, 'metrics_response_cache_bytes', 'Bytes held by the response cache.', () => cache.stats.bytes);
  gauge(registry, 'metrics_live_subscriptions', 'Open seriesUpdated subscriptions.', () => sources.seriesUpdates.open);
  total(
    registry,
    'metrics_writes_announced_total',
    'Write announcements (series_updated notifications) heard.',
    () => sources.seriesUpdates.heard,
  );

  const hookDeliveries = sources.hookDeliveries;
  if (hookDeliveries !== undefined) {
    new Counter({
      name: 'metrics_hook_deliveries_total',
      help:
        'Webhook delivery attempts by outcome: delivered (2xx), retried (failed, to be tried again), ' +
        'failed (given up after HOOKS_FAIL_AFTER_HOURS).',
      labelNames: ['outcome'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [outcome, count] of Object.entries(hookDeliveries())) this.inc({ outcome }, count);
      },
    });
  }

  // With WORKERS > 1 an instance's figures are all its workers': the primary gathers them.
  const gather = cluster.isWorker ? shareWithPrimary(registry) : undefined;

  const shared = sources.rateLimitsShared;
  if (shared !== undefined) {
    gauge(
      registry,
      'metrics_rate_limits_shared',
      '1 while rate limits are shared through Redis, 0 while Redis is unreachable and each process counts alone.',
      () => (shared() ? 1 : 0),
      'min',
    );
  }
  const replicas = sources.replicas;
  if (replicas !== undefined) {
    new Gauge({
      name: 'metrics_replica_in_use',
      help: '1 while a replica serves reads, 0 while it is out of rotation (failed or lagging).',
      labelNames: ['replica'],
      registers: [registry],
      aggregator: 'min',
      collect() {
        for (const state of replicas()) this.set({ replica: state.replica }, state.inUse ? 1 : 0);
      },
    });
    new Gauge({
      name: 'metrics_replica_lag_seconds',
      help: "How far a replica's replay trails the primary, at its last check; absent while it cannot be asked.",
      labelNames: ['replica'],
      registers: [registry],
      aggregator: 'max',
      collect() {
        this.reset();
        for (const state of replicas())
          if (state.lagSeconds !== null) this.set({ replica: state.replica }, state.lagSeconds);
      },
    });
  }

  // Label sets are few (routes × methods × statuses): their children are looked up once.
  // Counting is then small next to answering (prom-client still checks and hashes a
  // child's labels); with METRICS=off nothing is counted at all.
  const counters = new Map<string, Counter.Internal>();
  const timers = new Map<string, Histogram.Internal<string>>();
  return {
    observeRequest(route, method, status, seconds, outcome) {
      const key = `${route} ${method} ${status}`;
      let counter = counters.get(key);
      if (counter === undefined) counters.set(key, (counter = requests.labels(route, method, String(status))));
      counter.inc();
      let timer = timers.get(route);
      if (timer === undefined) timers.set(route, (timer = latency.labels(route)));
      timer.observe(seconds);
      if (status === 429) refused.inc();
      if (outcome !== undefined) cutShort.labels(route, outcome).inc();
    },
    async render() {
      return {
        contentType: registry.contentType,
        body: gather === undefined ? await registry.metrics() : await gather(),
      };
    },
  };
}

// Private

/** A gauge read from `read` at each scrape; `aggregator` says how workers' values make the instance's. */
function gauge(
  registry: Registry,
  name: string,
  help: string,
  read: () => number,
  aggregator: Aggregator = 'sum',
): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    aggregator,
    collect() {
      this.set(read());
    },
  });
}

/** A counter kept elsewhere (a running total since start), read at each scrape. */
function total(registry: Registry, name: string, help: string, read: () => number): void {
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}
