import { Controller, Get, HttpCode, HttpException, HttpStatus, Inject } from '@nestjs/common';
import {
  HealthCheck,
  HealthCheckService,
  HealthIndicatorService,
  type HealthIndicatorResult,
} from '@nestjs/terminus';
import { ConfigService } from '@relaygram/config';
import { REDIS, type RelaygramRedis } from '@relaygram/queue';
import { HealthRegistry } from './health-registry';

const REDIS_PING_TIMEOUT_MS = 1000;

async function pingWithin(redis: RelaygramRedis, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      redis.ping().then((pong) => pong === 'PONG'),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      }),
    ]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Kubernetes probes and the operator's /healthz. They answer on both listeners and
 * never need a token: they reveal states, not secrets.
 */
@Controller()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicator: HealthIndicatorService,
    private readonly registry: HealthRegistry,
    private readonly config: ConfigService,
    @Inject(REDIS) private readonly redis: RelaygramRedis,
  ) {}

  /** The process runs and its event loop turns; nothing external is checked. */
  @Get('health/live')
  @HealthCheck()
  live() {
    return this.health.check([]);
  }

  /** Ready to take traffic: Redis answers and every feature says it is ready. */
  @Get('health/ready')
  @HealthCheck()
  ready() {
    const checks = [
      async (): Promise<HealthIndicatorResult> => {
        const session = this.indicator.check('redis');
        return (await pingWithin(this.redis, REDIS_PING_TIMEOUT_MS))
          ? session.up()
          : session.down('Redis does not answer');
      },
      (): HealthIndicatorResult =>
        this.indicator.check('config').up({ source: this.config.config.source }),
      ...[...this.registry.readinessChecks()].map(
        ([name, check]) =>
          async (): Promise<HealthIndicatorResult> => {
            const session = this.indicator.check(name);
            const result = await check();
            return result.ready ? session.up(result.detail) : session.down(result.detail);
          },
      ),
    ];
    return this.health.check(checks);
  }

  /** SPEC section 7: the operator's summary; 503 only when Redis does not answer. */
  @Get('healthz')
  @HttpCode(HttpStatus.OK)
  async healthz() {
    const redisUp = await pingWithin(this.redis, REDIS_PING_TIMEOUT_MS);
    const bots = redisUp ? await this.registry.bots() : [];
    const body = {
      status: bots.every((b) => b.healthy) ? 'ok' : 'degraded',
      service: this.config.service,
      polling: bots.some((b) => b.polling),
      bots,
    };
    if (!redisUp) {
      throw new HttpException(
        { ...body, status: 'error', error: 'Redis does not answer' },
        HttpStatus.SERVICE_UNAVAILABLE,
      );
    }
    return body;
  }
}
