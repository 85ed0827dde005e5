import { RedisKeys } from '@relaygram/contracts';
import { DeliveryLogSettings } from './delivery-log/delivery-log-settings';
import type { RelaygramRedis } from './redis/redis-client';

/**
 * What every store class needs: a client with the scripts defined, the key layout, and
 * the delivery log's settings the scripts record under.
 */
export interface QueueContext {
  readonly redis: RelaygramRedis;
  readonly keys: RedisKeys;
  readonly deliveryLog: DeliveryLogSettings;
}

export function queueContext(
  redis: RelaygramRedis,
  prefix: string,
  deliveryLog = new DeliveryLogSettings(),
): QueueContext {
  return { redis, keys: new RedisKeys(prefix), deliveryLog };
}
