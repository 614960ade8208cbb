import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { generateApiKey, hashApiKey } from '../src/auth/api-keys.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { insertApiKey } from '../src/db/api-key-queries.js';
import { openPostgres } from '../src/db/open-postgres.js';
import { createMemoryRateLimitStore } from '../src/limits/memory-bucket-store.js';
import { createRedisRateLimitStore, type RedisRateLimitStore } from '../src/limits/redis-bucket-store.js';
import { prerequisite } from './support/ci.js';
import { freePort } from './support/ports.js';
import { until } from './support/poll.js';
import { npmStart, type StartedServer } from './support/processes.js';
import { startTestService, TEST_KEY, type TestService } from './support/service.js';
import { createScratchDatabase, STORE_KINDS, TEST_DATABASE_URL, type ScratchDatabase } from './support/stores.js';

/**
 * Rate limits shared through Redis, against a private redis-server this test starts,
 * kills, freezes and restarts: two instances on one PostgreSQL spend one key's burst
 * together; while Redis is away they fail open on their own buckets without waiting on
 * it, and share again once it is back.
 */

const REDIS_AVAILABLE = prerequisite(
  hasRedisServer(),
  'redis-server',
  'install it with apt-get install -y redis-server',
);
const POSTGRES = STORE_KINDS[1]!;
const PATH = '/v1/metrics/price?project=ethereum&start_date=2026-06-30';
const UNREACHABLE = 'Redis is unreachable: rate limits are kept in this process until it is back';
const SHARED_AGAIN = 'rate limits are shared through Redis again';

describe.skipIf(!REDIS_AVAILABLE)('the Redis bucket store', { timeout: 30_000 }, () => {
  let redis: PrivateRedis;
  let store: RedisRateLimitStore;

  beforeAll(async () => {
    redis = await startPrivateRedis(await freePort());
    store = createRedisRateLimitStore(redis.url, createMemoryRateLimitStore(), pino({ level: 'silent' }));
  });
  afterAll(async () => {
    await store?.close();
    await redis?.kill();
  });

  it('computes exactly what the in-memory buckets compute for the same takes', async () => {
    const memory = createMemoryRateLimitStore();
    const policy = { perMinute: 90, burst: 7 };
    let now = 1_800_000_000_000;
    let seed = 3;
    for (let i = 0; i < 200; i++) {
      seed = (seed * 48271) % 2147483647;
      const cost = 1 + (seed % 9);
      now += seed % 2500;
      expect(await store.take('equivalence', cost, now, policy), `take ${i}`).toEqual(
        memory.take('equivalence', cost, now, policy),
      );
    }
    expect(store.shared).toBe(true);
  });

  it("refills no interval twice when the instances' clocks disagree", async () => {
    const policy = { perMinute: 60, burst: 10 };
    const ahead = 1_800_000_000_000;
    expect(await store.take('skew', 10, ahead, policy)).toMatchObject({ allowed: true, remaining: 0 });
    // An instance whose clock is 5 s behind: the bucket is empty for it too.
    expect(await store.take('skew', 1, ahead - 5_000, policy)).toMatchObject({
      allowed: false,
      remaining: 0,
      retryAfterSeconds: 1,
    });
    // One second later on the clock ahead: one unit back, not the six a rewound bucket would give.
    expect(await store.take('skew', 1, ahead + 1_000, policy)).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('lets a bucket expire once it would be full again', async () => {
    const policy = { perMinute: 6_000, burst: 10 };
    await store.take('expiry', 10, Date.now(), policy);
    const ttl = Number(execFileSync('redis-cli', ['-p', String(redis.port), 'pttl', 'metrics:rate:expiry']).toString());
    // 10 units at 100 a second: full after 100 ms, kept a second longer at most.
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(1_100);
  });

  it('says limits are not shared while Redis has never answered, before any charge tells it so', async () => {
    const nowhere = createRedisRateLimitStore(
      `redis://127.0.0.1:${await freePort()}`,
      createMemoryRateLimitStore(),
      pino({ level: 'silent' }),
    );
    try {
      await new Promise((r) => setTimeout(r, 300)); // a refused connection or two
      expect(nowhere.shared).toBe(false);
      expect(await nowhere.take('nowhere', 1, Date.now(), { perMinute: 60, burst: 10 })).toMatchObject({
        allowed: true,
        remaining: 9,
      });
      expect(nowhere.shared).toBe(false);
    } finally {
      await nowhere.close();
    }
    expect(store.shared).toBe(true);
  });

  it(
    'names why Redis refused the connection (a wrong password) in its warning, ' + 'not only that it is unreachable',
    async () => {
      const guarded = await startPrivateRedis(await freePort(), ['--requirepass', 'right-password']);
      const lines: string[] = [];
      // The service's own logger: errors written by class, code and message only.
      const logger = createLogger(
        loadConfig({ LOG_LEVEL: 'warn' }),
        new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) }),
      );
      const wrong = createRedisRateLimitStore(
        `redis://:wrong-password@127.0.0.1:${guarded.port}`,
        createMemoryRateLimitStore(),
        logger,
      );
      try {
        await new Promise((r) => setTimeout(r, 300)); // a refused login or two
        expect(await wrong.take('wrong', 1, Date.now(), { perMinute: 60, burst: 10 })).toMatchObject({
          allowed: true,
          remaining: 9,
        });
        expect(wrong.shared).toBe(false);
        const warnings = lines
          .map((l) => JSON.parse(l) as { msg: string; err?: { message?: string } })
          .filter((l) => l.msg === UNREACHABLE);
        expect(warnings).toHaveLength(1);
        expect(warnings[0]!.err?.message).toMatch(/WRONGPASS/);
        expect(lines.join('')).not.toContain('wrong-password');
      } finally {
        await wrong.close();
        await guarded.kill();
      }
    },
  );

  it('keeps sharing a bucket that takes 1e17 ms or more to refill (a huge burst at one unit a minute)', async () => {
    // 2e12 units at 1 a minute refill from empty in 1.2e17 ms, which Lua hands to PEXPIRE as "1.2e+17".
    const policy = { perMinute: 1, burst: 2e12 };
    const memory = createMemoryRateLimitStore();
    const now = Date.now();
    expect(await store.take('huge-burst', 2e12, now, policy)).toEqual(memory.take('huge-burst', 2e12, now, policy));
    expect(store.shared).toBe(true);
    expect(await store.take('huge-burst', 1, now, policy)).toMatchObject({
      allowed: false,
      remaining: 0,
      retryAfterSeconds: 60,
    });
    expect(store.shared).toBe(true);
    expect(
      Number(execFileSync('redis-cli', ['-p', String(redis.port), 'pttl', 'metrics:rate:huge-burst']).toString()),
    ).toBeGreaterThan(0);
  });

  it(
    'does not spend again in Redis a charge that timed out there and was made ' +
      'in the fallback, from the first charge on',
    async () => {
      const policy = { perMinute: 60, burst: 100 };
      // A process just started: connected, nothing charged yet.
      const fresh = createRedisRateLimitStore(redis.url, createMemoryRateLimitStore(), pino({ level: 'silent' }));
      try {
        await until('the new store connected', () => fresh.shared, { everyMs: 50 });
        // and its first TIME answered (a second: a loaded machine took more than 200 ms)
        await new Promise((r) => setTimeout(r, 1_000));
        redis.freeze();
        try {
          expect(await fresh.take('stalled', 40, Date.now(), policy)).toMatchObject({ allowed: true, remaining: 60 });
          expect(fresh.shared).toBe(false);
        } finally {
          redis.thaw();
        }
        await new Promise((r) => setTimeout(r, 1_100));
        await fresh.take('after-stall', 1, Date.now(), policy);
        expect(fresh.shared).toBe(true);
        // The 40 units were taken from this process's bucket; Redis, woken, must not take them too.
        expect(
          execFileSync('redis-cli', ['-p', String(redis.port), 'exists', 'metrics:rate:stalled'])
            .toString()
            .trim(),
        ).toBe('0');
        expect(await fresh.take('stalled', 1, Date.now(), policy)).toMatchObject({ allowed: true, remaining: 99 });
      } finally {
        await fresh.close();
      }
    },
  );

  it("still charges Redis, once, after this process's clock went back", async () => {
    const policy = { perMinute: 60, burst: 100 };
    await store.take('warm-up', 1, Date.now(), policy);
    const realNow = Date.now.bind(Date);
    const behind = vi.spyOn(Date, 'now').mockImplementation(() => realNow() - 10_000);
    try {
      // By Redis's clock the charge looks 10 s late; it was not, so it is made, once.
      expect(await store.take('clock-back', 30, realNow(), policy)).toMatchObject({ allowed: true, remaining: 70 });
      expect(store.shared).toBe(true);
      expect(await store.take('clock-back', 30, realNow(), policy)).toMatchObject({ allowed: true, remaining: 40 });
    } finally {
      behind.mockRestore();
    }
  });

  it(
    'tries a Redis that stopped answering with one charge at a time, the others ' +
      'counting in the fallback without waiting',
    async () => {
      const policy = { perMinute: 60, burst: 100 };
      await store.take('warm-up', 1, Date.now(), policy);
      const before = redis.scriptCalls();
      redis.freeze();
      let turns: boolean[];
      try {
        const started = performance.now();
        await store.take('probe', 1, Date.now(), policy);
        expect(performance.now() - started).toBeGreaterThanOrEqual(240); // it waited for Redis
        expect(store.shared).toBe(false);
        await new Promise((r) => setTimeout(r, 1_100)); // Redis is due to be tried again
        // Whether each charge was answered only after the event loop turned (a timer, I/O):
        // one waits for Redis; the 19 beside it are answered from memory before that.
        let turned = false;
        setImmediate(() => (turned = true));
        turns = await Promise.all(
          Array.from({ length: 20 }, async () => (await store.take('probe', 1, Date.now(), policy), turned)),
        );
        expect(store.shared).toBe(false);
      } finally {
        redis.thaw();
      }
      expect(turns.filter((late) => late)).toHaveLength(1);
      await new Promise((r) => setTimeout(r, 1_100));
      // Sent after them on the same connection, so Redis has run the stalled charges when it answers.
      await store.take('probe-after', 1, Date.now(), policy);
      expect(store.shared).toBe(true);
      // Redis was sent the first probe, one of the twenty, and the last charge: not the twenty.
      expect(redis.scriptCalls() - before).toBe(3);
    },
  );
});

describe.skipIf(!REDIS_AVAILABLE || !POSTGRES.available)(
  'two instances on one PostgreSQL sharing rate limits through Redis',
  { timeout: 90_000 },
  () => {
    let redis: PrivateRedis;
    let instances: TestService[] = [];

    /** 20 requests over real sockets, alternating between the two instances. */
    const burst = async (key?: string) => {
      const answers: { status: number; retryAfter: string | null; ms: number }[] = [];
      for (let i = 0; i < 20; i++) {
        const started = Date.now();
        const res = await instances[i % 2]!.fetch(PATH, { key });
        await res.arrayBuffer();
        answers.push({ status: res.status, retryAfter: res.headers.get('retry-after'), ms: Date.now() - started });
      }
      return {
        ok: answers.filter((a) => a.status === 200).length,
        refused: answers.filter((a) => a.status === 429),
        other: answers.filter((a) => a.status !== 200 && a.status !== 429).map((a) => a.status),
        slowest: Math.max(...answers.map((a) => a.ms)),
      };
    };
    const flush = () => execFileSync('redis-cli', ['-p', String(redis.port), 'flushall']);
    const sharedGauge = async (instance: TestService) => {
      const text = await (await instance.get('/metrics', { key: null })).text();
      return /^metrics_rate_limits_shared (\d)$/m.exec(text)?.[1];
    };
    const logged = (message: string) => instances.map((s) => s.logs.filter((l) => l.msg === message).length);
    /** Sends a request to each instance every 100 ms until both have logged charging Redis again (5 s at most). */
    const untilSharedAgain = async (before: number[]) => {
      for (let i = 0; i < 50 && logged(SHARED_AGAIN).some((n, at) => n === before[at]); i++) {
        await Promise.all(instances.map(async (s) => (await s.get(PATH)).arrayBuffer()));
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(logged(SHARED_AGAIN)).toEqual(before.map((n) => n + 1));
    };

    beforeAll(async () => {
      redis = await startPrivateRedis(await freePort());
      const env = {
        REDIS_URL: redis.url,
        RATE_LIMIT_PER_MINUTE: '1',
        RATE_LIMIT_BURST: '10',
        RESPONSE_CACHE_MB: '0',
        METRICS: 'public',
      };
      const first = await startTestService(POSTGRES, env);
      const store = openPostgres({
        url: first.databaseUrl!,
        poolSize: 2,
        statementTimeoutSeconds: 5,
        connectTimeoutSeconds: 5,
      });
      const second = await startTestService(POSTGRES, env, {
        store: { store, url: first.databaseUrl!, dispose: () => store.close() },
      });
      instances = [first, second];
    }, 90_000);
    afterAll(async () => {
      for (const instance of [...instances].reverse()) await instance.stop();
      await redis?.kill();
    });

    it('spends one burst of 10 across both instances: 10 answers, then 429s with Retry-After', async () => {
      flush();
      const { ok, refused } = await burst();
      expect(ok).toBe(10);
      expect(refused).toHaveLength(10);
      for (const answer of refused) expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(await sharedGauge(instances[0]!)).toBe('1');
      expect(await (await instances[0]!.get('/docs', { key: null })).text()).toContain(
        'The budget is shared by every instance of the service (it is kept in Redis)',
      );
    });

    it(
      'keeps the buckets of another deployment on the same Redis apart, though ' +
        'its stored keys have the same row ids',
      async () => {
        flush();
        const other = await startTestService(STORE_KINDS[0]!, {
          REDIS_URL: redis.url,
          RATE_LIMIT_PER_MINUTE: '1',
          RATE_LIMIT_BURST: '10',
          RESPONSE_CACHE_MB: '0',
        });
        try {
          const ours = generateApiKey();
          const theirs = generateApiKey();
          await insertApiKey(instances[0]!.running.services.store, 'deployment-a', hashApiKey(ours), {});
          await insertApiKey(other.running.services.store, 'deployment-b', hashApiKey(theirs), {});
          const [[a], [b]] = await Promise.all([
            instances[0]!.running.services.store.query<{ id: number }>(
              `select id from api_key where name = 'deployment-a'`,
            ),
            other.running.services.store.query<{ id: number }>(`select id from api_key where name = 'deployment-b'`),
          ]);
          expect(Number(a!.id)).toBe(Number(b!.id));
          const { ok, refused } = await burst(ours);
          expect([ok, refused.length]).toEqual([10, 10]);
          const res = await other.get(PATH, { key: theirs });
          expect(res.status).toBe(200);
          expect(res.headers.get('ratelimit')).toBe('"default";r=9;t=60');
        } finally {
          await other.stop();
        }
      },
    );

    it(
      "fails open on each instance's own buckets while Redis is killed, without " +
        'waiting on it, and shares again once it is back',
      async () => {
        const recoveries = logged(SHARED_AGAIN);
        await redis.kill();
        const alone = await burst();
        // Each instance spends a bucket of its own now: all 20 pass (10 each), none waits on Redis.
        expect(alone.ok).toBe(20);
        expect(alone.other).toEqual([]);
        expect(alone.slowest).toBeLessThan(1_000);
        expect(logged(UNREACHABLE)).toEqual([1, 1]);
        expect(await sharedGauge(instances[0]!)).toBe('0');

        redis = await startPrivateRedis(redis.port);
        await untilSharedAgain(recoveries);
        flush();
        const together = await burst();
        expect(together.ok).toBe(10);
        expect(await sharedGauge(instances[0]!)).toBe('1');
      },
    );

    it(
      'answers while Redis accepts connections but does not answer, trying it ' +
        'once a second, and shares again when it does',
      async () => {
        // A key of its own, so the fallback buckets start full: the outage above spent the test key's.
        const key = generateApiKey();
        await insertApiKey(instances[0]!.running.services.store, 'frozen-redis', hashApiKey(key), {
          ratePerMinute: 1,
          burst: 10,
        });
        const warnings = logged(UNREACHABLE);
        const recoveries = logged(SHARED_AGAIN);
        const before = redis.scriptCalls();
        const started = Date.now();
        redis.freeze();
        try {
          const frozen = await burst(key);
          // A charge waits 250 ms for Redis (the upper bound is one on a hang), then Redis is left alone for a second.
          expect(frozen.slowest).toBeGreaterThanOrEqual(250);
          expect(frozen.slowest).toBeLessThan(10_000);
          expect(frozen.other).toEqual([]);
          // Each instance spends a bucket of its own: 10 each.
          expect(frozen.ok).toBe(20);
          expect(logged(UNREACHABLE)).toEqual(warnings.map((n) => n + 1));
        } finally {
          redis.thaw();
        }
        const elapsed = Date.now() - started;
        // What the instances sent while it was frozen, run now: once a second each at most, not 20 charges.
        let last = -1;
        const settled = () => {
          const calls = redis.scriptCalls();
          const same = calls === last;
          last = calls;
          return same;
        };
        await until('Redis to run what it was sent while frozen', settled, { everyMs: 200 });
        const tries = last - before;
        expect(tries).toBeGreaterThanOrEqual(2);
        expect(tries).toBeLessThanOrEqual(2 * (1 + Math.floor(elapsed / 1_000)));
        await untilSharedAgain(recoveries);
        flush();
        expect((await burst(key)).ok).toBe(10);
      },
    );
  },
);

describe.skipIf(!REDIS_AVAILABLE || !POSTGRES.available)(
  'WORKERS=2 with REDIS_URL under npm start',
  { timeout: 120_000 },
  () => {
    let redis: PrivateRedis;
    let database: ScratchDatabase;
    let server: StartedServer;
    /** A fixed range of 30 days: one unit, whatever today is. */
    const RANGE = '/v1/metrics/price?project=ethereum&start_date=2026-06-01&end_date=2026-06-30';
    /** 20 requests, each on a connection of its own, which the primary hands to the workers in turn. */
    const burst = async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++) statuses.push(await getOnNewConnection(`${server.url}${RANGE}`, TEST_KEY));
      return statuses.filter((s) => s === 200).length;
    };

    beforeAll(async () => {
      redis = await startPrivateRedis(await freePort());
      database = await createScratchDatabase(TEST_DATABASE_URL!);
      server = await npmStart(
        {
          DATABASE_URL: database.url,
          WORKERS: '2',
          REDIS_URL: redis.url,
          API_KEYS: TEST_KEY,
          RATE_LIMIT_PER_MINUTE: '1',
          RATE_LIMIT_BURST: '10',
          LOG_LEVEL: 'warn',
        },
        90_000,
      );
    }, 120_000);
    afterAll(async () => {
      await server?.stop('SIGTERM');
      await redis?.kill();
      await database?.drop();
    });

    it('spends one bucket in both workers while Redis is up, and one bucket each while it is not', async () => {
      expect(await burst()).toBe(10);
      // The same spread with each worker counting alone gives 20: both workers did serve the burst above.
      await redis.kill();
      expect(await burst()).toBe(20);
    });
  },
);

// Private

/** GET `url` on a fresh connection (closed after the answer); resolves to the status. */
function getOnNewConnection(url: string, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, headers: { 'x-api-key': key, connection: 'close' } }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode!));
    });
    req.setTimeout(2_000, () => req.destroy(new Error(`no answer from ${url} within 2 s`)));
    req.once('error', reject);
    req.end();
  });
}

interface PrivateRedis {
  port: number;
  url: string;
  /** SIGKILL, as a crash would: resolves once the process has exited. */
  kill(): Promise<void>;
  /** SIGSTOP: connections stay open and nothing is answered. */
  freeze(): void;
  thaw(): void;
  /** Scripts (the charges) Redis has run since it started: EVALSHA and EVAL calls. */
  scriptCalls(): number;
}

/**
 * A redis-server of this test's own on `port` (with more `options`), keeping nothing on disk; resolves once it
 * answers PING (or asks for a password).
 */
async function startPrivateRedis(port: number, options: string[] = []): Promise<PrivateRedis> {
  const child: ChildProcess = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--daemonize',
      'no',
      ...options,
    ],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (let i = 0; i < 100; i++) {
    try {
      if (
        /^(PONG|NOAUTH)/.test(
          execFileSync('redis-cli', ['-p', String(port), 'ping'], { stdio: ['ignore', 'pipe', 'ignore'] })
            .toString()
            .trim(),
        )
      )
        break;
    } catch {
      // not up yet
    }
    if (i === 99) throw new Error(`redis-server did not answer on port ${port} within 5 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    freeze: () => void child.kill('SIGSTOP'),
    thaw: () => void child.kill('SIGCONT'),
    scriptCalls: () => {
      const stats = execFileSync('redis-cli', ['-p', String(port), 'info', 'commandstats']).toString();
      return [...stats.matchAll(/^cmdstat_eval(?:sha)?:calls=(\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
    },
  };
}

function hasRedisServer(): boolean {
  try {
    execFileSync('redis-server', ['--version']);
    return true;
  } catch {
    return false;
  }
}
