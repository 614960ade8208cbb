import type { IncomingMessage, ServerResponse } from 'node:http';
import { pendingMigrations } from '../db/migrate.js';
import { sendWhole } from '../http/send-json.js';
import type { OpsCall } from './ops-services.js';

/** `/healthz`: the process is alive and serving; says nothing about the database. */
export function handleHealth({ req, res }: OpsCall): Promise<void> {
  return sendStatus(req, res, 200, { status: 'ok' });
}

/** `/readyz`: 200 only when the database answers and every migration is applied. */
export async function handleReady({ req, res, services }: OpsCall): Promise<void> {
  if (services.state.stopping) return sendStatus(req, res, 503, { status: 'stopping' });
  if (services.state.directory === undefined)
    return sendStatus(req, res, 503, { status: 'starting: database not prepared yet' });
  try {
    const pending = await pendingMigrations(services.store);
    if (pending.length > 0) return sendStatus(req, res, 503, { status: 'migrations pending', pending });
    await sendStatus(req, res, 200, {
      status: 'ready',
      store: services.store.kind,
      ...(services.replicas === undefined ? {} : { replicas: services.replicas.states() }),
    });
  } catch {
    await sendStatus(req, res, 503, { status: 'database unavailable' });
  }
}

function sendStatus(req: IncomingMessage, res: ServerResponse, status: number, body: object): Promise<void> {
  const headers: [string, string][] = [
    ['content-type', 'application/json'],
    ['cache-control', 'no-store'],
  ];
  if (status === 503) headers.push(['retry-after', '5']);
  return sendWhole(req, res, { status, headers, body: Buffer.from(JSON.stringify(body)), compress: false });
}
