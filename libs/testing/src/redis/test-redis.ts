import type { Cluster, Redis } from 'ioredis';

/** The Redis of the test run: jest's global setup finds one and sets REDIS_URL. */
export function redisUrl(): string {
  const url = process.env.REDIS_URL;
  if (!url)
    throw new Error(
      'REDIS_URL is not set: run the tests through jest (its global setup finds a Redis)',
    );
  return url;
}

/**
 * Deletes every key matching `pattern` (a test's `<prefix>:*`). By SCAN: KEYS would block
 * the Redis every test file shares for as long as it walks the whole keyspace.
 */
export async function deleteKeys(redis: Redis | Cluster, pattern: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    if (found.length) await redis.del(...found);
  } while (cursor !== '0');
}

/** Every key matching `pattern`, by SCAN as `deleteKeys`. */
export async function keysMatching(redis: Redis | Cluster, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    keys.push(...found);
    cursor = next;
  } while (cursor !== '0');
  return keys;
}
