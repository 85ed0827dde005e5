import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { RELAYGRAM_LOGGER } from '@relaygram/observability';
import { REDIS, waitForRedis, type RelaygramRedis } from '@relaygram/queue';
import type { Logger } from 'pino';

/** How long start-up waits for the first Redis connection. */
const REDIS_WAIT_MS = 10_000;

/**
 * The shared Redis client fails fast instead of queueing commands while it is not
 * connected (so a webhook answers 503 rather than hang). Right after start it has not
 * connected yet, so ingress waits for it before the listener opens and the pollers
 * start; if Redis does not come, ingress starts anyway and answers 503 until it does.
 */
@Injectable()
export class RedisReadiness implements OnModuleInit {
  constructor(
    @Inject(REDIS) private readonly redis: RelaygramRedis,
    @Inject(RELAYGRAM_LOGGER) private readonly logger: Logger,
  ) {}

  async onModuleInit(): Promise<void> {
    if (!(await waitForRedis(this.redis, REDIS_WAIT_MS))) {
      this.logger.warn(
        `Redis did not answer within ${REDIS_WAIT_MS / 1000} s: webhooks answer 503 and pollers wait until it does`,
      );
    }
  }
}
