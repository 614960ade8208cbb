import type { Catalog } from '../catalog/load-catalog.js';
import { DEFAULT_DELIVERIES_LIMIT, MAX_DELIVERIES_LIMIT, MAX_HOOKS_PER_KEY } from '../hooks/hook-actions.js';
import { MAX_RULES } from '../hooks/hook-input.js';
import { errorResponses } from './openapi-operations.js';

/** The `/v1/hooks` paths of the OpenAPI document: webhooks, an extension of the contract. */
export function hookPaths(catalog: Catalog): Record<string, unknown> {
  const schemas = hookSchemas(catalog);
  const json = (schema: unknown) => ({ 'application/json': { schema } });
  const id = { name: 'id', in: 'path', required: true, description: 'The hook id (hk_…).', schema: { type: 'string' } };
  const keyed = errorResponses(['bad-request', 'unauthorized', 'rate-limited', 'unavailable']);
  const owned = errorResponses(['bad-request', 'unauthorized', 'not-found', 'rate-limited', 'unavailable']);
  return {
    '/v1/hooks': {
      get: {
        operationId: 'listHooks',
        summary: "This key's webhooks (extension)",
        parameters: [],
        responses: {
          '200': {
            description: 'The hooks, oldest first; never their secrets.',
            content: json({
              type: 'object',
              required: ['hooks'],
              properties: { hooks: { type: 'array', items: schemas.hook } },
            }),
          },
          ...keyed,
        },
      },
      post: {
        operationId: 'createHook',
        summary: 'A new webhook (extension)',
        description:
          `Deliveries of data events to \`url\`, signed as Standard Webhooks specifies. At most ` +
          `${MAX_HOOKS_PER_KEY} hooks per key. The URL must be https:// and resolve to public ` +
          'addresses (unless the service runs with HOOKS_ALLOW_PRIVATE=on). The secret is in this answer only.',
        requestBody: { required: true, content: json(schemas.input) },
        parameters: [],
        responses: {
          '201': { description: 'The hook, with its secret (shown once).', content: json(schemas.created) },
          ...keyed,
        },
      },
    },
    '/v1/hooks/{id}': {
      get: {
        operationId: 'getHook',
        summary: 'One of this key’s webhooks (extension)',
        parameters: [id],
        responses: { '200': { description: 'The hook.', content: json(schemas.hook) }, ...owned },
      },
      patch: {
        operationId: 'updateHook',
        summary: 'Changes a webhook’s settings (extension)',
        parameters: [id],
        requestBody: { required: true, content: json(schemas.patch) },
        responses: { '200': { description: 'The hook as changed.', content: json(schemas.hook) }, ...owned },
      },
      delete: {
        operationId: 'deleteHook',
        summary: 'Deletes a webhook and its deliveries (extension)',
        parameters: [id],
        responses: { '204': { description: 'Deleted.' }, ...owned },
      },
    },
    '/v1/hooks/{id}/deliveries': {
      get: {
        operationId: 'listHookDeliveries',
        summary: 'A webhook’s deliveries, newest first (extension)',
        parameters: [
          id,
          {
            name: 'limit',
            in: 'query',
            required: false,
            description: 'Deliveries per page.',
            schema: { type: 'integer', minimum: 1, maximum: MAX_DELIVERIES_LIMIT, default: DEFAULT_DELIVERIES_LIMIT },
          },
          {
            name: 'cursor',
            in: 'query',
            required: false,
            description: 'The `next` of an earlier page.',
            schema: { type: 'string' },
          },
        ],
        responses: {
          '200': {
            description: 'A page of deliveries.',
            content: json({
              type: 'object',
              required: ['deliveries'],
              properties: {
                deliveries: { type: 'array', items: schemas.delivery },
                next: { type: 'string', description: 'Present while older deliveries remain.' },
              },
            }),
          },
          ...owned,
        },
      },
    },
    '/v1/hooks/{id}/replay': {
      post: {
        operationId: 'replayHook',
        summary: 'Delivers again every event from a point of the changes feed (extension)',
        description:
          'Moves the hook back to a changes-feed `cursor` (after it) or to `since` (writes at or after it): ' +
          'every event from there is delivered again, after what the hook already has queued.',
        parameters: [id],
        requestBody: {
          required: true,
          content: json({
            type: 'object',
            additionalProperties: false,
            properties: {
              since: { type: 'string', description: 'An RFC 3339 instant (a date: the start of that UTC day).' },
              cursor: { type: 'string', description: 'A cursor of GET /v1/changes or of a delivery.' },
            },
          }),
        },
        responses: { '202': { description: 'The hook at its new position.', content: json(schemas.hook) }, ...owned },
      },
    },
  };
}

// Private

function hookSchemas(catalog: Catalog) {
  const rule = {
    type: 'object',
    required: ['type'],
    description:
      'landed: a day stored where none was; revision: a stored value changed by at least minAbsPercent % ' +
      '(default 0) or removed; threshold: a written value meets `op value` where the value before did not; ' +
      "late: a series' day has not landed by the metric's expectedBy (UTC, next day) plus graceMinutes " +
      '(default 60), once per series and day.',
    properties: {
      type: { enum: ['landed', 'revision', 'threshold', 'late'] },
      minAbsPercent: { type: 'number', minimum: 0 },
      op: { enum: ['>', '>=', '<', '<='] },
      value: { type: 'number' },
      graceMinutes: { type: 'integer', minimum: 0, maximum: 10080 },
    },
  };
  const filter = {
    type: 'object',
    additionalProperties: false,
    description: 'Which series; a list left out means all.',
    properties: {
      metrics: { type: 'array', items: { enum: catalog.metrics.map((m) => m.name) } },
      projects: { type: 'array', items: { enum: catalog.allProjects } },
    },
  };
  const settings = {
    url: { type: 'string', format: 'uri' },
    description: { type: 'string', maxLength: 500 },
    filter,
    rules: { type: 'array', minItems: 1, maxItems: MAX_RULES, items: rule },
  };
  const hook = {
    type: 'object',
    required: ['id', 'url', 'description', 'filter', 'rules', 'active', 'createdAt', 'cursor'],
    properties: {
      id: { type: 'string' },
      ...settings,
      active: { type: 'boolean' },
      createdAt: { type: 'string', format: 'date-time' },
      cursor: { type: 'string', description: "A changes-feed cursor at the hook's position." },
    },
  };
  const event = {
    type: 'object',
    required: ['rule', 'type', 'metric', 'project', 'date', 'value', 'previousValue', 'updatedAt'],
    properties: {
      rule: { type: 'integer', description: "The index in the hook's rules of the rule that fired." },
      type: { enum: ['landed', 'revision', 'threshold', 'late'] },
      metric: { type: 'string' },
      project: { type: 'string' },
      date: { $ref: '#/components/schemas/Date' },
      value: { type: ['number', 'null'] },
      previousValue: { type: ['number', 'null'] },
      updatedAt: { type: 'string', format: 'date-time' },
    },
  };
  return {
    hook,
    input: { type: 'object', required: ['url', 'rules'], additionalProperties: false, properties: settings },
    patch: {
      type: 'object',
      additionalProperties: false,
      properties: { ...settings, active: { type: 'boolean', description: 'false pauses deliveries.' } },
    },
    created: {
      ...hook,
      required: [...hook.required, 'secret'],
      properties: { ...hook.properties, secret: { type: 'string', description: 'whsec_…: shown once.' } },
    },
    delivery: {
      type: 'object',
      required: [
        'id',
        'state',
        'attempts',
        'lastStatus',
        'lastError',
        'nextAttemptAt',
        'createdAt',
        'cursor',
        'events',
      ],
      properties: {
        id: { type: 'string', description: 'The webhook-id header of its attempts.' },
        state: { enum: ['pending', 'delivered', 'failed'] },
        attempts: { type: 'integer', description: 'Tries made, the successful one included.' },
        lastStatus: { type: ['integer', 'null'] },
        lastError: { type: ['string', 'null'] },
        nextAttemptAt: { type: ['string', 'null'], format: 'date-time' },
        createdAt: { type: 'string', format: 'date-time' },
        finishedAt: { type: ['string', 'null'], format: 'date-time' },
        cursor: { type: 'string' },
        events: { type: 'array', items: event },
      },
    },
  };
}
