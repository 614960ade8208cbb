import { spawn, type ChildProcess } from 'node:child_process';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryRateLimitStore } from '../src/limits/memory-bucket-store.js';
import { createRedisRateLimitStore } from '../src/limits/redis-bucket-store.js';
import { prerequisite } from './support/ci.js';
import { freePort } from './support/private-postgres.js';
import { startTestService, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';
import { execFileSync } from 'node:child_process';

/**
 * Rate limits shared through Redis, against a private redis-server this test starts and
 * kills: two instances spend one key's burst together; without Redis they fail open on
 * their own buckets, and share again once it is back.
 */

const REDIS_AVAILABLE = prerequisite(hasRedisServer(), 'redis-server', 'install it with apt-get install -y redis-server');
const PATH = '/v1/metrics/price?project=ethereum&start_date=2026-06-30';

describe.skipIf(!REDIS_AVAILABLE)('rate limits shared through Redis', { timeout: 90_000 }, () => {
  let port: number;
  let redis: ChildProcess | undefined;
  let instances: TestService[] = [];

  const startRedis = async () => {
    redis = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no', '--bind', '127.0.0.1'], { stdio: 'ignore' });
    for (let i = 0; i < 100; i++) {
      try {
        if (execFileSync('redis-cli', ['-p', String(port), 'ping']).toString().trim() === 'PONG') return;
      } catch {
        // not up yet
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('redis-server did not start');
  };
  const stopRedis = async () => {
    const child = redis;
    redis = undefined;
    if (child === undefined || child.exitCode !== null) return;
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await gone;
  };
  /** 20 requests, alternating between the two instances: the statuses, and the slowest answer. */
  const burst = async () => {
    const statuses: number[] = [];
    let slowest = 0;
    for (let i = 0; i < 20; i++) {
      const started = Date.now();
      const res = await instances[i % 2]!.get(PATH);
      slowest = Math.max(slowest, Date.now() - started);
      statuses.push(res.status);
      await res.arrayBuffer();
    }
    return { ok: statuses.filter((s) => s === 200).length, refused: statuses.filter((s) => s === 429).length, slowest };
  };

  beforeAll(async () => {
    port = await freePort();
    await startRedis();
    const env = { REDIS_URL: `redis://127.0.0.1:${port}`, RATE_LIMIT_PER_MINUTE: '1', RATE_LIMIT_BURST: '10', RESPONSE_CACHE_MB: '0' };
    instances = await Promise.all([startTestService(STORE_KINDS[0]!, env), startTestService(STORE_KINDS[0]!, env)]);
  }, 90_000);
  afterAll(async () => {
    await Promise.all(instances.map((s) => s.stop()));
    await stopRedis();
  });

  it('computes exactly what the in-memory buckets compute', async () => {
    const memory = createMemoryRateLimitStore();
    const shared = createRedisRateLimitStore(`redis://127.0.0.1:${port}`, createMemoryRateLimitStore(), pino({ level: 'silent' }));
    try {
      const policy = { perMinute: 90, burst: 7 };
      let now = 1_800_000_000_000;
      let seed = 3;
      for (let i = 0; i < 200; i++) {
        seed = (seed * 48271) % 2147483647;
        const cost = 1 + (seed % 9);
        now += seed % 2500;
        expect(await shared.take('equivalence', cost, now, policy), `take ${i}`).toEqual(memory.take('equivalence', cost, now, policy));
      }
      expect(shared.shared).toBe(true);
    } finally {
      await shared.close();
    }
  });

  it('lets two instances spend one burst of 10 together, not 10 each', async () => {
    execFileSync('redis-cli', ['-p', String(port), 'flushall']);
    const { ok, refused } = await burst();
    expect(ok).toBe(10);
    expect(refused).toBe(10);
  });

  it('fails open on each instance\'s own buckets while Redis is gone, without hanging, and shares again once it is back', async () => {
    await stopRedis();
    const alone = await burst();
    // Each instance spends its own bucket of 10 now: all 20 pass, none waits on Redis.
    expect(alone.ok).toBe(20);
    expect(alone.slowest).toBeLessThan(1_000);
    for (const instance of instances) {
      expect(instance.logs.filter((l) => l.msg === 'Redis is unreachable: rate limits are kept in this process until it is back')).toHaveLength(1);
    }

    await startRedis();
    // Until each instance has charged Redis again (a reconnect within about a second).
    for (let i = 0; i < 50 && !instances.every((s) => s.logs.some((l) => l.msg === 'rate limits are shared through Redis again')); i++) {
      await Promise.all(instances.map(async (s) => (await s.get(PATH)).arrayBuffer()));
      await new Promise((r) => setTimeout(r, 100));
    }
    execFileSync('redis-cli', ['-p', String(port), 'flushall']);
    const together = await burst();
    expect(together.ok).toBe(10);
  });
});

// Private

function hasRedisServer(): boolean {
  try {
    execFileSync('redis-server', ['--version']);
    return true;
  } catch {
    return false;
  }
}
