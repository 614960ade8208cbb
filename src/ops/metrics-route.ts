import type { OpsCall } from './ops-services.js';

/** `GET /metrics`: the Prometheus text exposition (`METRICS=on` needs a key, `public` does not). */
export async function handleMetrics({ req, res, services }: OpsCall): Promise<void> {
  const { contentType, body } = await services.metrics.render();
  res.statusCode = 200;
  res.setHeader('content-type', contentType);
  res.setHeader('cache-control', 'no-store');
  res.end(req.method === 'HEAD' ? undefined : body);
}
