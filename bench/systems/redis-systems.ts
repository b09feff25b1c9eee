// The Redis single-instance lock, through ioredis (one connection per client, auto-pipelining
// on: commands issued in one tick leave in one write, as KeyedClient does):
//   - acquire `SET key value NX PX lease`, retried every `retryMs` while the key is taken;
//   - release a compare-and-delete Lua script (EVALSHA): delete only if the value is ours.
// And node-redlock 4.2.0 on the same single instance, with its default retry delay (200 ms,
// jitter 100 ms) and retryCount -1 (retry until granted, instead of failing after 10 tries).
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import Redlock from 'redlock';
import { LEASE_MS, type LockClient, type LockSystem } from './lock-system.ts';

const COMPARE_AND_DELETE = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`;

type UnlockingRedis = Redis & { unlockIfOwner(key: string, value: string): Promise<number> };

function newRedis(port: number): Redis {
  return new Redis({ host: '127.0.0.1', port, enableAutoPipelining: true, lazyConnect: true, maxRetriesPerRequest: 1 });
}

export function redisSetNx(port: number, serverCpuMs: () => number, retryMs: number): LockSystem {
  return {
    name: `Redis SET NX PX + Lua delete (retry ${retryMs} ms)`,
    serverCpuMs,
    connect: async (): Promise<LockClient> => {
      const redis = newRedis(port) as UnlockingRedis;
      redis.defineCommand('unlockIfOwner', { numberOfKeys: 1, lua: COMPARE_AND_DELETE });
      await redis.connect();
      const id = randomBytes(6).toString('hex');
      let n = 0;
      return {
        acquire: async (key) => {
          const value = `${id}:${n++}`;
          while ((await redis.set(key, value, 'PX', LEASE_MS, 'NX')) !== 'OK') {
            await new Promise((r) => setTimeout(r, retryMs));
          }
          return { release: async () => void (await redis.unlockIfOwner(key, value)) };
        },
        close: async () => void (await redis.quit()),
      };
    },
  };
}

export function redlockDefault(port: number, serverCpuMs: () => number): LockSystem {
  return {
    name: 'node-redlock 4.2.0 (single instance, default 200 ms retry)',
    serverCpuMs,
    connect: async (): Promise<LockClient> => {
      const redis = newRedis(port);
      await redis.connect();
      const redlock = new Redlock([redis], { retryCount: -1 });
      return {
        acquire: async (key) => {
          const lock = await redlock.lock(key, LEASE_MS);
          return { release: () => lock.unlock() };
        },
        close: async () => void (await redis.quit()),
      };
    },
  };
}
