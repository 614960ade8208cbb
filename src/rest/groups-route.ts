import { sendJson } from '../http/send-json.js';
import { readParameters } from './parse-query.js';
import type { RestCall } from './rest-services.js';

/** `GET /v1/groups`: the catalog's named groups of projects. It takes no parameters. */
export async function handleGroups({ req, res, services, query }: RestCall): Promise<void> {
  readParameters(query, []);
  const groups = services.catalog.groups.map((g) => ({
    name: g.name,
    description: g.description,
    projects: g.projects,
  }));
  await sendJson(req, res, JSON.stringify({ groups }), { maxAgeSeconds: services.config.cacheMaxAgeSeconds });
}
