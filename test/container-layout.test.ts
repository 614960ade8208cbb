import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { dockerfileComments } from './support/dockerfile.js';
import { freePort } from './support/ports.js';
import { inContainer, layOutImage, type ImageLayout } from './support/image-layout.js';
import { REPO } from './support/processes.js';

const KEY_LINE = /Created API key "local" \(shown once, keep it\): (mk_[\w-]+)/;
const ANY_KEY = /mk_[\w-]{43}/;

/**
 * The image the Dockerfile describes, without Docker: its stages laid out in a folder as
 * `docker build` would (files, `npm ci --omit=dev`, ownership), then its CMD started there as
 * the image's unprivileged user, on the embedded store, and used as a container's user would.
 */
describe('the container image, laid out as its Dockerfile says', { timeout: 120_000 }, () => {
  let dir: string;
  let image: ImageLayout;
  let env: Record<string, string>;
  let url: string;
  let server: Container;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'metrics-image-'));
    image = await layOutImage(join(REPO, 'Dockerfile'), REPO, dir);
    // Away from the service's default 4000 and the ephemeral ports other suites' servers take
    // (the HEALTHCHECK needs a real PORT, not 0).
    const port = await freePort([4700, 4799]);
    // The image's ENV, listening where this test can reach it; no DATABASE_URL: the embedded store.
    env = { HOST: '127.0.0.1', PORT: String(port) };
    url = `http://127.0.0.1:${port}`;
    server = startContainer(image, env);
    await untilReady(server, url);
  }, 120_000);

  afterAll(async () => {
    server?.child.kill('SIGKILL');
    await server?.exited;
    await rm(dir, { recursive: true, force: true });
  });

  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${url}${path}`, { headers });

  it(
    'holds the compiled code, the migrations and the explorer, and every command ' + 'its comments and the docs name',
    () => {
      expect(image.user.name).toBe('node');
      expect(image.cmd).toEqual(['node', 'dist/src/main.js']);
      expect(existsSync(join(image.workdir, 'dist/src/main.js'))).toBe(true);
      expect(readdirNames(join(image.workdir, 'db/migrations'))).toEqual(readdirNames(join(REPO, 'db/migrations')));
      expect(readdirNames(join(image.workdir, 'src/pages/explorer'))).toEqual([
        'explorer.css',
        'explorer.js',
        'index.html',
      ]);
      const commands =
        dockerfileComments(readFileSync(join(REPO, 'Dockerfile'), 'utf8'))
          .join('\n')
          .match(/dist\/src\/commands\/\w+\.js/g) ?? [];
      expect(commands.length).toBeGreaterThanOrEqual(3);
      const docs =
        readFileSync(join(REPO, 'docs/operations.md'), 'utf8')
          .split(/^## /m)
          .find((s) => s.startsWith('Container\n')) ?? '';
      const named = [...docs.matchAll(/`(?:node dist\/src\/commands\/)?(\w+)\.js`/g)].map(
        (m) => `dist/src/commands/${m[1]}.js`,
      );
      expect(named.length).toBeGreaterThanOrEqual(4);
      for (const command of [...commands, ...named])
        expect(existsSync(join(image.workdir, command)), command).toBe(true);
    },
  );

  it('is lean: no tests, no TypeScript sources and no development dependencies', async () => {
    expect(existsSync(join(image.workdir, 'test'))).toBe(false);
    const sources = (await readdir(image.workdir, { recursive: true })).filter(
      (f) => !f.startsWith('node_modules') && /\.ts$/.test(f),
    );
    expect(sources).toEqual([]);
    const lock = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean }>;
    };
    const devOnly = Object.keys(lock.packages).filter(
      (p) => lock.packages[p]!.dev === true && !p.includes('/node_modules/', 1),
    );
    expect(devOnly).toEqual(
      expect.arrayContaining(['node_modules/vitest', 'node_modules/tsx', 'node_modules/typescript']),
    );
    expect(devOnly.filter((p) => existsSync(join(image.workdir, p)))).toEqual([]);
    expect(existsSync(join(image.workdir, 'node_modules/graphql-yoga'))).toBe(true);
  });

  it('listens on all interfaces on the port it exposes, and keeps its embedded store in a volume', () => {
    expect(image.env).toMatchObject({ NODE_ENV: 'production', HOST: '0.0.0.0' });
    expect(image.exposed).toEqual([image.env.PORT]);
    expect(image.volumes).toEqual(['/app/.data']);
    expect(image.workdir).toBe(image.path('/app'));
  });

  it('becomes ready on the embedded store and prints its first key once in the log', async () => {
    const res = await get('/readyz');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toEqual({ status: 'ready', store: 'pglite' });
    const key = KEY_LINE.exec(server.stderr())?.[1];
    expect(key).toMatch(/^mk_[\w-]{43}$/);
    expect(server.log().split(key!)).toHaveLength(2);
    // JSON lines reach standard output in blocks, at least once a second.
    await vi.waitFor(() => expect(server.logLines().map((l) => l.msg)).toContain('ready'), { timeout: 3_000 });
    expect(server.logLines().find((l) => l.store !== undefined)).toMatchObject({
      msg: 'store: embedded PGlite in .data/pglite',
    });
    // Made by the server, so by the image's user (here its stand-in, when the test runs as root).
    if (process.getuid?.() === 0) expect(statSync(image.path('.data/pglite')).uid).toBe(image.user.uid);
  });

  it('answers /healthz and serves a series with that key on /v1', async () => {
    const health = await get('/healthz');
    expect(health.headers.get('content-type')).toBe('application/json');
    expect(await health.json()).toEqual({ status: 'ok' });
    const res = await get('/v1/metrics/token-price-usd?project=ethereum', { 'x-api-key': firstKey() });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await res.json()) as { ethereum: { date: string; value: number }[] };
    expect(body.ethereum.length).toBeGreaterThan(1000);
    expect(body.ethereum[0]).toEqual({ date: expect.stringMatching(/^\d{4}-\d\d-\d\d$/), value: expect.any(Number) });
  });

  it('renders GraphiQL with no key in the page', async () => {
    const res = await get('/graphql', { accept: 'text/html' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const page = await res.text();
    expect(page).toContain('<title>Metrics GraphiQL</title>');
    expect(page).not.toContain(firstKey());
    expect(page).not.toMatch(ANY_KEY);
  });

  it('serves the explorer and its static files, with their types', async () => {
    const page = await get('/explore');
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await page.text()).toBe(readFileSync(join(REPO, 'src/pages/explorer/index.html'), 'utf8'));
    const assets: [string, string, string][] = [
      ['explorer.js', 'text/javascript; charset=utf-8', 'src/pages/explorer/explorer.js'],
      ['explorer.css', 'text/css; charset=utf-8', 'src/pages/explorer/explorer.css'],
      ['uplot.js', 'text/javascript; charset=utf-8', 'node_modules/uplot/dist/uPlot.iife.min.js'],
      ['uplot.css', 'text/css; charset=utf-8', 'node_modules/uplot/dist/uPlot.min.css'],
    ];
    for (const [name, type, file] of assets) {
      const res = await get(`/explore/${name}`);
      expect(res.status, name).toBe(200);
      expect(res.headers.get('content-type'), name).toBe(type);
      expect(await res.text(), name).toBe(readFileSync(join(REPO, file), 'utf8'));
    }
  });

  it('serves /docs and the OpenAPI document', async () => {
    const docs = await get('/docs');
    expect(docs.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await docs.text();
    expect(html).toContain('<title>Metrics API</title>');
    expect(html).toContain('/v1/openapi.json');
    const res = await get('/v1/openapi.json', { 'x-api-key': firstKey() });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const document = (await res.json()) as { openapi: string; paths: Record<string, unknown> };
    expect(document.openapi).toMatch(/^3\.1\./);
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(['/v1/metrics', '/v1/metrics/token-price-usd']));
  });

  it('hands a keys command run inside it to the running server, whose new key works at once', async () => {
    const run = await command(image, ['node', 'dist/src/commands/keys.js', 'create', '--name', 'x'], env, 30_000);
    expect(run.stderr).toContain('holds .data/pglite; running keys there');
    expect(run.code).toBe(0);
    const key = run.stdout.trim();
    expect(key).toMatch(/^mk_[\w-]{43}$/);
    expect((await get('/v1/metrics/token-price-usd?project=ethereum', { 'x-api-key': key })).status).toBe(200);
  });

  it("passes the image's HEALTHCHECK", async () => {
    const check = image.healthcheck!;
    expect(check.options.get('timeout')).toMatch(/^\d+s$/);
    const run = await command(image, check.command, env, parseInt(check.options.get('timeout')!, 10) * 1000);
    expect(run).toMatchObject({ code: 0, stderr: '' });
  });

  it("stops on SIGTERM with exit code 0 within docker stop's 10 s, and then fails the HEALTHCHECK", async () => {
    const started = Date.now();
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(
      server
        .logLines()
        .slice(-2)
        .map((l) => l.msg),
    ).toEqual(['shutting down', 'stopped']);
    const run = await command(image, image.healthcheck!.command, env, 3_000);
    expect(run.code).toBe(1);
  });

  function firstKey(): string {
    return KEY_LINE.exec(server.stderr())![1]!;
  }
});

describe('laying out an image', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'metrics-image-refusals-'));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  const CASES: [string, string, RegExp][] = [
    ['an instruction it does not reproduce', 'ADD https://example.com/x /x', /line 3: ADD is not reproduced/],
    [
      'a RUN command it does not reproduce',
      'RUN mkdir -p x && apt-get install -y curl',
      /line 3 .*the command `apt-get install -y curl` is not reproduced/,
    ],
    [
      'a file .dockerignore leaves out of the context',
      'COPY test ./test',
      /line 3 .*test is left out of the build context by \.dockerignore/,
    ],
    [
      'a step writing into a volume declared before it',
      'VOLUME ["/app/.data"]\nRUN mkdir -p .data',
      /line 4 .*docker build discards what later steps write there/,
    ],
    ['a CMD in shell form', 'CMD node dist/src/main.js', /line 3 .*expected the exec form/],
  ];
  for (const [what, lines, error] of CASES) {
    it(`refuses ${what}, naming its line`, async () => {
      const into = join(dir, what.replace(/\W+/g, '-'));
      await mkdir(into);
      await writeFile(`${into}.Dockerfile`, `FROM node:22-slim\nWORKDIR /app\n${lines}\n`);
      await expect(layOutImage(`${into}.Dockerfile`, REPO, into)).rejects.toThrow(error);
    });
  }
});

// Private

interface Container {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stdout(): string;
  stderr(): string;
  /** Both streams, as `docker logs` shows them. */
  log(): string;
  logLines(): Record<string, unknown>[];
}

/** Starts the image's CMD in its layout, as `docker run -e …` with `env` would. */
function startContainer(image: ImageLayout, env: Record<string, string>): Container {
  const [program, ...args] = image.cmd;
  const child = spawn(program!, args, inContainer(image, env));
  let out = '';
  let err = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    exited,
    stdout: () => out,
    stderr: () => err,
    log: () => out + err,
    logLines: () =>
      out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

/**
 * Polls `/readyz` until it says ready and the welcome is printed. Rejects with the server's
 * output if it ends, takes a minute, or retries preparing the database: the embedded store
 * has nothing to wait for, so a retry means something of the image is missing.
 */
async function untilReady(server: Container, url: string): Promise<void> {
  let ended = false;
  void server.exited.then(() => (ended = true));
  const retrying = () => server.logLines().some((l) => l.msg === 'database not ready; retrying');
  for (
    const deadline = Date.now() + 60_000;
    Date.now() < deadline && !ended && !retrying();
    await new Promise((r) => setTimeout(r, 200))
  ) {
    const res = await fetch(`${url}/readyz`).catch(() => undefined);
    if (res?.status === 200 && server.stderr().includes('Metrics service ready at')) return;
  }
  const why = ended ? 'it exited' : retrying() ? 'it is retrying to prepare the database' : 'after 60 s';
  throw new Error(
    `the server in the image was not ready (${why}):\n${server.stderr()}\n${server.stdout().slice(-2000)}`,
  );
}

/** Runs `argv` in the container, as `docker exec` (or the HEALTHCHECK) does, killing it after `timeoutMs`. */
function command(
  image: ImageLayout,
  argv: string[],
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const [program, ...args] = argv;
  const child = spawn(program!, args, inContainer(image, env));
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve) => {
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function readdirNames(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}
