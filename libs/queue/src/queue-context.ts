import { RedisKeys } from '@relaygram/contracts';
import type { RelaygramRedis } from './redis/redis-client';

/** What every store class needs: a client with the scripts defined, and the key layout. */
export interface QueueContext {
  readonly redis: RelaygramRedis;
  readonly keys: RedisKeys;
}

export function queueContext(redis: RelaygramRedis, prefix: string): QueueContext {
  return { redis, keys: new RedisKeys(prefix) };
}
