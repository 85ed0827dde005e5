import { createRedis, localRedis, waitForRedis, type LocalRedis } from '@relaygram/queue';

/**
 * The Redis the demo runs on: REDIS_URL, else 127.0.0.1:6379 when it answers, else a
 * throwaway redis-server from PATH (no data on disk). Its keys live under a prefix of the
 * run's own, removed at the end.
 */
export async function demoRedis(envUrl: string | undefined): Promise<LocalRedis> {
  if (envUrl) return { url: envUrl, stop: async () => undefined };
  return localRedis({ stopOnExit: true });
}

export async function deletePrefix(url: string, prefix: string): Promise<void> {
  const redis = createRedis(url, { connectionName: 'relaygram-demo', mode: 'request' });
  try {
    if (!(await waitForRedis(redis, 5_000))) return;
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      cursor = next;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
}
