// Jest loads global setup outside moduleNameMapper, hence the relative import.
// eslint-disable-next-line @nx/enforce-module-boundaries
import {
  localRedis,
  startRedisServer,
  type LocalRedis,
} from '../../libs/queue/src/redis/local-redis';

declare global {
  var __relaygramTestRedis: LocalRedis | undefined;
}

/**
 * Every test talks to a real Redis: REDIS_URL when set, else 127.0.0.1:6379 when it
 * answers, else a throwaway redis-server from PATH on a free port.
 */
export default async function globalSetup(): Promise<void> {
  if (process.env.REDIS_URL) return;
  // RELAYGRAM_TEST_REDIS=spawn skips 127.0.0.1:6379 and always starts a child, which is
  // how the no-Redis path gets exercised on a machine that has a Redis running.
  const redis =
    process.env.RELAYGRAM_TEST_REDIS === 'spawn' ? await startRedisServer() : await localRedis();
  process.env.REDIS_URL = redis.url;
  globalThis.__relaygramTestRedis = redis;
}
