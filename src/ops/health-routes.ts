import type { ServerResponse } from 'node:http';
import { pendingMigrations } from '../db/migrate.js';
import type { OpsCall } from './ops-services.js';

/** `/healthz`: the process is alive and serving; says nothing about the database. */
export function handleHealth({ res }: OpsCall): void {
  sendStatus(res, 200, { status: 'ok' });
}

/** `/readyz`: 200 only when the database answers and every migration is applied. */
export async function handleReady({ res, services }: OpsCall): Promise<void> {
  if (services.state.stopping) return sendStatus(res, 503, { status: 'stopping' });
  if (services.state.directory === undefined)
    return sendStatus(res, 503, { status: 'starting: database not prepared yet' });
  try {
    const pending = await pendingMigrations(services.store);
    if (pending.length > 0) return sendStatus(res, 503, { status: 'migrations pending', pending });
    sendStatus(res, 200, {
      status: 'ready',
      store: services.store.kind,
      ...(services.replicas === undefined ? {} : { replicas: services.replicas.states() }),
    });
  } catch {
    sendStatus(res, 503, { status: 'database unavailable' });
  }
}

function sendStatus(res: ServerResponse, status: number, body: object): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('content-type', 'application/json');
  res.setHeader('cache-control', 'no-store');
  if (status === 503) res.setHeader('retry-after', '5');
  res.end(text);
}
