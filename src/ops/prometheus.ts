import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ResponseCache } from '../cache/response-cache.js';
import type { SeriesUpdates } from '../live/series-updates.js';

/** What the service counts for `GET /metrics`. */
export interface ServiceMetrics {
  /** One answered request: its route pattern (never the raw path), method and status. */
  observeRequest(route: string, method: string, status: number, seconds: number): void;
  /** The Prometheus text exposition of everything counted, and its content type. */
  render(): Promise<{ contentType: string; body: string }>;
}

export interface MetricSources {
  responseCache: ResponseCache;
  seriesUpdates: SeriesUpdates;
  /** Whether rate limits are shared through Redis now; absent when no Redis is configured. */
  rateLimitsShared?: (() => boolean) | undefined;
}

/**
 * Request counts and latencies by route and status, rate-limit refusals, the response
 * cache, live subscriptions and whether rate limits are shared, in a registry of this
 * service's own (prom-client), so two services in one process (tests) do not mix.
 * Labels are route patterns and status codes: a bounded set, whatever the traffic.
 */
export function createServiceMetrics(sources: MetricSources): ServiceMetrics {
  const registry = new Registry();
  const requests = new Counter({ name: 'metrics_http_requests_total', help: 'Requests answered, by route pattern, method and status.', labelNames: ['route', 'method', 'status'], registers: [registry] });
  const latency = new Histogram({
    name: 'metrics_http_request_duration_seconds',
    help: 'Time from a request\'s arrival to the end of its answer, by route pattern.',
    labelNames: ['route'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const refused = new Counter({ name: 'metrics_rate_limit_rejections_total', help: 'Requests refused with 429 by the rate limiter.', registers: [registry] });
  const cache = sources.responseCache;
  new Gauge({ name: 'metrics_response_cache_hits', help: 'Answers served from the response cache since start (a counter read at scrape).', registers: [registry], collect() { this.set(cache.stats.hits); } });
  new Gauge({ name: 'metrics_response_cache_misses', help: 'Cacheable answers read from the database since start.', registers: [registry], collect() { this.set(cache.stats.misses); } });
  new Gauge({ name: 'metrics_response_cache_bytes', help: 'Bytes held by the response cache.', registers: [registry], collect() { this.set(cache.stats.bytes); } });
  new Gauge({ name: 'metrics_response_cache_invalidations', help: 'Times every kept answer was dropped because a write was announced.', registers: [registry], collect() { this.set(cache.stats.invalidations); } });
  new Gauge({ name: 'metrics_live_subscriptions', help: 'Open seriesUpdated subscriptions.', registers: [registry], collect() { this.set(sources.seriesUpdates.open); } });
  new Gauge({ name: 'metrics_writes_announced', help: 'Write announcements (series_updated notifications) heard since start.', registers: [registry], collect() { this.set(sources.seriesUpdates.heard); } });
  const shared = sources.rateLimitsShared;
  if (shared !== undefined) {
    new Gauge({
      name: 'metrics_rate_limits_shared',
      help: '1 while rate limits are shared through Redis, 0 while Redis is unreachable and each process counts alone.',
      registers: [registry],
      collect() {
        this.set(shared() ? 1 : 0);
      },
    });
  }
  // Label sets are few (routes × methods × statuses): their children are looked up once,
  // so counting a request is two map lookups, not a label hash per metric.
  const counters = new Map<string, Counter.Internal>();
  const timers = new Map<string, Histogram.Internal<string>>();
  return {
    observeRequest(route, method, status, seconds) {
      const key = `${route} ${method} ${status}`;
      let counter = counters.get(key);
      if (counter === undefined) counters.set(key, (counter = requests.labels(route, method, String(status))));
      counter.inc();
      let timer = timers.get(route);
      if (timer === undefined) timers.set(route, (timer = latency.labels(route)));
      timer.observe(seconds);
      if (status === 429) refused.inc();
    },
    async render() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}
