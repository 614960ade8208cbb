import { sendWhole } from '../http/send-json.js';
import type { OpsCall } from './ops-services.js';

/** `GET /metrics`: the Prometheus text exposition (`METRICS=on` needs a key, `public` does not). */
export async function handleMetrics({ req, res, services }: OpsCall): Promise<void> {
  const { contentType, body } = await services.metrics.render();
  const headers = [
    ['content-type', contentType],
    ['cache-control', 'no-store'],
  ] as const;
  await sendWhole(req, res, { headers, body: Buffer.from(body), compress: false });
}
