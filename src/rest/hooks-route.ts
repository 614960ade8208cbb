import { ApiError } from '../api/api-error.js';
import { readyDirectory } from '../api/unavailable.js';
import { hookActions, type HookContext } from '../hooks/hook-actions.js';
import { readBody } from '../http/fetch-bridge.js';
import { sendWhole } from '../http/send-json.js';
import { readParameters } from './parse-query.js';
import type { RestCall } from './rest-services.js';

/** `GET /v1/hooks` (this key's hooks) and `POST /v1/hooks` (a new one, 201, its secret shown once). */
export async function handleHooks(call: RestCall): Promise<void> {
  const { ctx, owner } = prepare(call);
  if (call.req.method === 'POST') {
    const hook = await hookActions.create(ctx, owner, await readJson(call));
    return send(call, 201, hook);
  }
  noParameters(call);
  await send(call, 200, { hooks: await hookActions.list(ctx, owner) });
}

/** `GET`, `PATCH` and `DELETE /v1/hooks/<id>`: another key's hook is a 404. */
export async function handleHook(call: RestCall): Promise<void> {
  const { ctx, owner } = prepare(call);
  switch (call.req.method) {
    case 'PATCH':
      return send(call, 200, await hookActions.update(ctx, owner, call.param, await readJson(call)));
    case 'DELETE':
      await hookActions.remove(ctx, owner, call.param);
      call.res.writeHead(204).end();
      return;
    default:
      noParameters(call);
      return send(call, 200, await hookActions.get(ctx, owner, call.param));
  }
}

/** `GET /v1/hooks/<id>/deliveries?limit=N&cursor=…`: newest first, a page at a time. */
export async function handleHookDeliveries(call: RestCall): Promise<void> {
  const { ctx, owner } = prepare(call);
  const params = readParameters(call.query, ['limit', 'cursor']);
  const page = await hookActions.deliveries(ctx, owner, call.param, {
    limit: params.get('limit'),
    cursor: params.get('cursor'),
  });
  await send(call, 200, page.next === undefined ? { deliveries: page.deliveries } : page);
}

/** `POST /v1/hooks/<id>/replay` with `{"since": instant}` or `{"cursor": changes cursor}`: 202 with the hook. */
export async function handleHookReplay(call: RestCall): Promise<void> {
  const { ctx, owner } = prepare(call);
  await send(call, 202, await hookActions.replay(ctx, owner, call.param, await readJson(call)));
}

// Private

/** A hook request's body is small: its settings. */
const MAX_HOOK_BODY_BYTES = 16 * 1024;

function prepare(call: RestCall): { ctx: HookContext; owner: string } {
  readyDirectory(call.services.state);
  const { services } = call;
  return {
    owner: call.caller!.id,
    ctx: {
      db: services.store,
      catalog: services.catalog,
      allowPrivate: services.config.hooksAllowPrivate,
      wake: () => services.hooks.wake(),
    },
  };
}

async function readJson(call: RestCall): Promise<unknown> {
  const text = (await readBody(call.req, MAX_HOOK_BODY_BYTES)).toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ApiError('bad-request', 'the body is not JSON', {
      errors: [{ param: 'request', message: 'expected a JSON object as the body' }],
    });
  }
}

function noParameters(call: RestCall): void {
  readParameters(call.query, []);
}

function send(call: RestCall, status: number, value: unknown): Promise<void> {
  call.res.setHeader('cache-control', 'no-store');
  return sendWhole(call.req, call.res, {
    status,
    headers: [['content-type', 'application/json']],
    body: Buffer.from(JSON.stringify(value)),
    compress: true,
  });
}
