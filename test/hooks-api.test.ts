import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPublicAddress } from '../src/hooks/safe-address.js';
import { createHook } from './support/hook-writes.js';
import { startTestService, TEST_KEY, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

const OTHER_KEY = 'other-key-0123456789abcdef';
const LIMIT_KEY = 'limit-key-0123456789abcdef';
const URL_OK = 'http://127.0.0.1:9/hook';

function json(body: unknown): RequestInit {
  return { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

describe.each(STORE_KINDS)('the hooks API on $name', (kind) => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService(kind, {
      HOOKS_ALLOW_PRIVATE: 'on',
      API_KEYS: `${TEST_KEY},${OTHER_KEY},${LIMIT_KEY}`,
    });
  }, 120_000);
  afterAll(async () => {
    await service?.stop();
  });

  it('creates a hook, shows its secret once, and lists, reads, changes and deletes it', async () => {
    const created = await createHook(service, {
      url: URL_OK,
      description: 'flows',
      filter: { metrics: ['etf-flows-btc'], projects: ['blackrock'] },
      rules: [{ type: 'landed' }, { type: 'threshold', op: '>=', value: 1000 }],
    });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(created).toMatchObject({
      url: URL_OK,
      description: 'flows',
      active: true,
      filter: { metrics: ['etf-flows-btc'], projects: ['blackrock'] },
      rules: [{ type: 'landed' }, { type: 'threshold', op: '>=', value: 1000 }],
    });
    expect(typeof created.cursor).toBe('string');
    const listed = (await (await service.get('/v1/hooks')).json()) as { hooks: Record<string, unknown>[] };
    const mine = listed.hooks.find((h) => h.id === created.id)!;
    expect(mine).toBeDefined();
    expect(mine).not.toHaveProperty('secret');
    const one = await service.get(`/v1/hooks/${created.id}`);
    expect(one.status).toBe(200);
    expect(await one.json()).not.toHaveProperty('secret');
    const patched = await service.get(`/v1/hooks/${created.id}`, {
      method: 'PATCH',
      ...json({ active: false, rules: [{ type: 'revision', minAbsPercent: 1 }], filter: null }),
    });
    expect(patched.status).toBe(200);
    expect(await patched.json()).toMatchObject({
      active: false,
      filter: {},
      rules: [{ type: 'revision', minAbsPercent: 1 }],
      url: URL_OK,
    });
    expect(service.logText()).not.toContain(created.secret);
    expect((await service.get(`/v1/hooks/${created.id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await service.get(`/v1/hooks/${created.id}`)).status).toBe(404);
  });

  it("answers 404 for another key's hooks, whatever is asked of them", async () => {
    const theirs = await createHook(service, { url: URL_OK, rules: [{ type: 'landed' }] }, OTHER_KEY);
    const listed = (await (await service.get('/v1/hooks')).json()) as { hooks: { id: string }[] };
    expect(listed.hooks.map((h) => h.id)).not.toContain(theirs.id);
    for (const [path, init] of [
      [`/v1/hooks/${theirs.id}`, {}],
      [`/v1/hooks/${theirs.id}`, { method: 'PATCH', ...json({ active: false }) }],
      [`/v1/hooks/${theirs.id}`, { method: 'DELETE' }],
      [`/v1/hooks/${theirs.id}/deliveries`, {}],
      [`/v1/hooks/${theirs.id}/replay`, { method: 'POST', ...json({ since: '2026-06-01T00:00:00Z' }) }],
    ] as const) {
      const res = await service.get(path, init);
      expect(res.status, `${init.method ?? 'GET'} ${path}`).toBe(404);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
    }
    expect((await service.get(`/v1/hooks/${theirs.id}`, { key: OTHER_KEY })).status).toBe(200);
    const graphql = await service.graphql(`{ hook(id: "${theirs.id}") { id } hooks { id } }`);
    const body = (await graphql.json()) as { data: { hook: unknown; hooks: { id: string }[] } };
    expect(body.data.hook).toBeNull();
    expect(body.data.hooks.map((h) => h.id)).not.toContain(theirs.id);
    const deleted = await service.graphql(`mutation { deleteHook(id: "${theirs.id}") }`);
    expect(((await deleted.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe(
      'NOT_FOUND',
    );
  });

  it('names every bad field in a 400, and GraphQL says the same as BAD_USER_INPUT', async () => {
    const bad = {
      url: 'ftp://example.com/x',
      filter: { metrics: ['no-such-metric'] },
      rules: [{ type: 'landing' }, { type: 'threshold', op: '=>', value: 'x' }, { type: 'late', graceMinutes: -1 }],
    };
    const res = await service.get('/v1/hooks', { method: 'POST', ...json(bad) });
    expect(res.status).toBe(400);
    const problem = (await res.json()) as { errors: { param: string; message: string }[] };
    expect(problem.errors.map((e) => e.param)).toEqual([
      'url',
      'filter.metrics[0]',
      'rules[0].type',
      'rules[1].op',
      'rules[1].value',
      'rules[2].graceMinutes',
    ]);
    // GraphQL refuses a string for a Float itself; the rest reaches the same check.
    const rules = [bad.rules[0], { type: 'threshold', op: '=>', value: 1 }, bad.rules[2]];
    const gql = await service.graphql(`mutation ($input: HookInput!) { createHook(input: $input) { secret } }`, {
      input: { ...bad, rules },
    });
    const answer = (await gql.json()) as {
      errors: { extensions: { code: string; errors?: { param: string; message: string }[] } }[];
    };
    expect(answer.errors[0]!.extensions.code).toBe('BAD_USER_INPUT');
    expect(answer.errors[0]!.extensions.errors).toEqual(problem.errors.filter((e) => e.param !== 'rules[1].value'));
  });

  it('refuses a body that is not JSON, unknown fields and no rules', async () => {
    const notJson = await service.get('/v1/hooks', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{',
    });
    expect(notJson.status).toBe(400);
    const res = await service.get('/v1/hooks', { method: 'POST', ...json({ url: URL_OK, rules: [], secret: 'x' }) });
    const problem = (await res.json()) as { errors: { param: string }[] };
    expect(problem.errors.map((e) => e.param)).toEqual(['secret', 'rules']);
  });

  it('lets a key have at most 20 hooks', async () => {
    const key = LIMIT_KEY;
    for (let i = 0; i < 20; i += 1) await createHook(service, { url: URL_OK, rules: [{ type: 'landed' }] }, key);
    const res = await service.get('/v1/hooks', {
      method: 'POST',
      key,
      ...json({ url: URL_OK, rules: [{ type: 'landed' }] }),
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('20 hooks');
  });

  it('creates, changes, replays and deletes through GraphQL, never sharing an answer between keys', async () => {
    const created = await service.graphql(
      `mutation { createHook(input: { url: "${URL_OK}", rules: [{ type: "revision", minAbsPercent: 5 }] })
        { secret hook { id active rules { type minAbsPercent } } } }`,
    );
    const data = ((await created.json()) as { data: { createHook: { secret: string; hook: { id: string } } } }).data;
    expect(data.createHook.secret).toMatch(/^whsec_/);
    const id = data.createHook.hook.id;
    const query = '{ hooks { id } }';
    const first = (await (await service.graphql(query)).json()) as { data: { hooks: { id: string }[] } };
    expect(first.data.hooks.map((h) => h.id)).toContain(id);
    const other = (await (await service.graphql(query, undefined, OTHER_KEY)).json()) as {
      data: { hooks: { id: string }[] };
    };
    expect(other.data.hooks.map((h) => h.id)).not.toContain(id);
    const updated = await service.graphql(`mutation { updateHook(id: "${id}", input: { active: false }) { active } }`);
    expect(((await updated.json()) as { data: { updateHook: { active: boolean } } }).data.updateHook.active).toBe(
      false,
    );
    const replayed = await service.graphql(
      `mutation { replayHook(id: "${id}", since: "2026-06-01T00:00:00Z") { id cursor } }`,
    );
    expect(((await replayed.json()) as { data: { replayHook: { id: string } } }).data.replayHook.id).toBe(id);
    const badReplay = await service.graphql(`mutation { replayHook(id: "${id}", cursor: "nope") { id } }`);
    const refused = (await badReplay.json()) as {
      errors: { extensions: { code: string; errors: { param: string }[] } }[];
    };
    expect(refused.errors[0]!.extensions.code).toBe('BAD_USER_INPUT');
    expect(refused.errors[0]!.extensions.errors[0]!.param).toBe('cursor');
    const deleted = await service.graphql(`mutation { deleteHook(id: "${id}") }`);
    expect(((await deleted.json()) as { data: { deleteHook: boolean } }).data.deleteHook).toBe(true);
  });
});

describe('hook URLs without HOOKS_ALLOW_PRIVATE', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService(STORE_KINDS[0]!);
  }, 120_000);
  afterAll(async () => {
    await service?.stop();
  });

  it.each([
    'http://example.com/hook',
    'https://127.0.0.1/hook',
    'https://localhost/hook',
    'https://10.1.2.3/hook',
    'https://192.168.0.10/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://[fd00:ec2::254]/hook',
    'https://user:pass@example.com/hook',
  ])('refuses %s with a 400 naming url', async (url) => {
    const res = await service.get('/v1/hooks', { method: 'POST', ...json({ url, rules: [{ type: 'landed' }] }) });
    expect(res.status).toBe(400);
    const problem = (await res.json()) as { errors: { param: string; message: string }[] };
    expect(problem.errors.map((e) => e.param)).toEqual(['url']);
  });

  it('judges addresses as public or not', () => {
    for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])
      expect(isPublicAddress(address), address).toBe(true);
    for (const address of [
      '127.0.0.1',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fe80::1',
      'fd00::1',
      '::ffff:10.0.0.1',
      '::ffff:7f00:1',
      '64:ff9b::a9fe:a9fe',
      'not an address',
    ])
      expect(isPublicAddress(address), address).toBe(false);
  });
});
