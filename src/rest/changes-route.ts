import { readyDirectory } from '../api/unavailable.js';
import { changesCost, changesRequestSchema, validateChangesRequest } from '../changes/changes-request.js';
import { changesPageJson, readChanges } from '../changes/read-changes.js';
import type { RestCall } from './rest-services.js';
import { sendJson } from '../http/send-json.js';
import { readParameters } from './parse-query.js';

/**
 * `GET /v1/changes?since=<instant>&limit=N[&cursor=…]`: every write of a point since an
 * instant, one row per write in write order, a page at a time (see `readChanges`). Not
 * cached: the same cursor may find more the next time.
 */
export async function handleChanges({ req, res, services, query, meter }: RestCall): Promise<void> {
  const params = readParameters(query, ['since', 'limit', 'cursor']);
  const request = validateChangesRequest(CHANGES_REQUEST, {
    since: params.get('since'),
    limit: params.get('limit'),
    cursor: params.get('cursor'),
  });
  await meter.charge(changesCost(request));
  readyDirectory(services.state); // 503 until migrations have run
  await sendJson(req, res, changesPageJson(await readChanges(services.reads, request)));
}

// Private

const CHANGES_REQUEST = changesRequestSchema({ since: 'since', limit: 'limit', cursor: 'cursor' });
