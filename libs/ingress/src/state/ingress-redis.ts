import type { Provider } from '@nestjs/common';
import { REDIS, type RelaygramRedis } from '@relaygram/queue';
import { withIngressScripts } from './ingress-scripts';

/** The shared fail-fast Redis client, with the ingress scripts (lease, period claim) defined. */
export const INGRESS_REDIS = Symbol('RELAYGRAM_INGRESS_REDIS');

export const ingressRedisProvider: Provider = {
  provide: INGRESS_REDIS,
  inject: [REDIS],
  useFactory: (redis: RelaygramRedis) => withIngressScripts(redis),
};
