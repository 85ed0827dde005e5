import { Inject, Injectable } from '@nestjs/common';
import type { RedisKeys } from '@relaygram/contracts';
import { QUEUE_CONTEXT, type QueueContext } from '@relaygram/queue';
import { withIngressScripts, type IngressRedis } from './ingress-scripts';

/** A client with the ingress scripts, and the key layout. */
export interface IngressContext extends Pick<QueueContext, 'keys'> {
  readonly redis: IngressRedis;
}

/**
 * Ingress's Redis: the shared fail-fast client with the ingress scripts (poller lease,
 * period and settings claims) defined, and the key layout. One injectable for both, so
 * a class that keeps bot state in Redis takes one argument for it rather than a client
 * and a context of the same client.
 */
@Injectable()
export class IngressStore implements IngressContext {
  readonly redis: IngressRedis;
  readonly keys: RedisKeys;

  constructor(@Inject(QUEUE_CONTEXT) ctx: QueueContext) {
    this.redis = withIngressScripts(ctx.redis);
    this.keys = ctx.keys;
  }
}
