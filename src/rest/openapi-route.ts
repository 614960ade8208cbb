import type { RestCall } from './rest-services.js';
import { sendJson } from '../http/send-json.js';
import { createOpenApiDocument } from './openapi-document.js';

/** `GET /v1/openapi.json`: the OpenAPI 3.1 document of the REST API. */
export async function handleOpenApi({ req, res, services }: RestCall): Promise<void> {
  await sendJson(req, res, JSON.stringify(createOpenApiDocument(services.catalog)), { maxAgeSeconds: 300 });
}
