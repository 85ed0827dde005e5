import { randomBytes } from 'node:crypto';
import {
  createRedis,
  redisAnswers,
  startRedisServer,
  waitForRedis,
  type LocalRedis,
  type RelaygramRedis,
} from '@relaygram/queue';

export interface RedisTarget {
  url: string;
  /** Where it came from, for the report. */
  source: 'REDIS_URL' | '127.0.0.1:6379' | 'private redis-server';
  /** The server's PID when it runs on this machine and /proc shows it (for its CPU time). */
  pid?: number;
  version: string;
  client: RelaygramRedis;
  stop(): Promise<void>;
}

async function describe(
  url: string,
  source: RedisTarget['source'],
  local?: LocalRedis,
): Promise<RedisTarget> {
  const client = createRedis(url, { connectionName: 'relaygram-bench' });
  if (!(await waitForRedis(client, 5_000))) {
    client.disconnect();
    await local?.stop();
    throw new Error(`no Redis answers at ${url}`);
  }
  const info = await client.info('server');
  const pid = Number(/process_id:(\d+)/.exec(info)?.[1]);
  const version = /redis_version:([^\r\n]+)/.exec(info)?.[1] ?? 'unknown';
  const host = new URL(url).hostname;
  const onThisMachine = host === '127.0.0.1' || host === 'localhost' || host === '::1';
  return {
    url,
    source,
    pid: onThisMachine && Number.isInteger(pid) ? pid : undefined,
    version,
    client,
    async stop() {
      await client.quit().catch(() => client.disconnect());
      await local?.stop();
    },
  };
}

/** The shared Redis (REDIS_URL, else 127.0.0.1:6379), else a redis-server child. */
export async function sharedRedis(): Promise<RedisTarget> {
  const fromEnv = process.env.REDIS_URL;
  if (fromEnv) return describe(fromEnv, 'REDIS_URL');
  if (await redisAnswers('127.0.0.1', 6379))
    return describe('redis://127.0.0.1:6379', '127.0.0.1:6379');
  return privateRedis();
}

/** A redis-server child of the bench, with nothing else in it (for INFO memory). */
export async function privateRedis(): Promise<RedisTarget> {
  const local = await startRedisServer();
  return describe(local.url, 'private redis-server', local);
}

/** A key prefix no other run or test uses: bench-<time>-<random>. */
export function runPrefix(): string {
  const time = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
  return `bench-${time}-${randomBytes(3).toString('hex')}`;
}

/** Deletes every key under `<prefix>:` (SCAN + UNLINK; never FLUSHALL: the Redis is shared). */
export function deleteKeys(client: RelaygramRedis, prefix: string): Promise<number> {
  return deleteMatching(client, `${prefix}:*`);
}

/** Deletes the keys of every measurement of a run (`<runPrefix>-<measurement>:...`). */
export function deleteRunKeys(client: RelaygramRedis, runPrefix: string): Promise<number> {
  return deleteMatching(client, `${runPrefix}-*`);
}

async function deleteMatching(client: RelaygramRedis, pattern: string): Promise<number> {
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 2000);
    cursor = next;
    if (keys.length) deleted += await client.unlink(...keys);
  } while (cursor !== '0');
  return deleted;
}
