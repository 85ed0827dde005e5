import { Controller, Get, HttpCode, HttpException, HttpStatus, Inject } from '@nestjs/common';
import {
  HealthCheck,
  HealthCheckService,
  HealthIndicatorService,
  type HealthIndicatorResult,
} from '@nestjs/terminus';
import { RouteConfig } from '@nestjs/platform-fastify';
import { ConfigService } from '@relaygram/config';
import { errorMessage } from '@relaygram/contracts';
import { QUEUE_CONTEXT, REDIS, type QueueContext, type RelaygramRedis } from '@relaygram/queue';
import { withTimeout } from '../timeout';
import { BotStatusReader } from './bot-status-reader';
import { readFailingRoutes, type RouteFailing } from './failing-routes';
import { HEALTH_SOURCE_TIMEOUT_MS, HealthRegistry } from './health-registry';
import { HEALTHZ_DOC, LIVE_DOC, READY_DOC } from './health.docs';

export const REDIS_PING_TIMEOUT_MS = 1000;

export async function pingWithin(redis: RelaygramRedis, timeoutMs: number): Promise<boolean> {
  try {
    return (await withTimeout(redis.ping(), timeoutMs)) === 'PONG';
  } catch {
    return false;
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
    private readonly bots: BotStatusReader,
    private readonly config: ConfigService,
    @Inject(REDIS) private readonly redis: RelaygramRedis,
    @Inject(QUEUE_CONTEXT) private readonly ctx: QueueContext,
  ) {}

  /**
   * The process runs, its event loop turns, and no feature knows of a fault only a
   * restart mends (a dispatcher's worker stuck while jobs wait); nothing external is
   * checked.
   */
  @Get('health/live')
  @RouteConfig(LIVE_DOC)
  @HealthCheck()
  live() {
    return this.health.check(
      [...this.registry.liveness()].map(([name, check]) => (): HealthIndicatorResult => {
        const session = this.indicator.check(name);
        const result = check();
        return result.alive ? session.up(result.detail) : session.down(result.detail);
      }),
    );
  }

  /** Ready to take traffic: Redis answers, the config is loaded, every feature says it is ready. */
  @Get('health/ready')
  @RouteConfig(READY_DOC)
  @HealthCheck()
  ready() {
    const checks = [
      async (): Promise<HealthIndicatorResult> => {
        const session = this.indicator.check('redis');
        return (await pingWithin(this.redis, REDIS_PING_TIMEOUT_MS))
          ? session.up()
          : session.down({ message: `Redis does not answer within ${REDIS_PING_TIMEOUT_MS} ms` });
      },
      (): HealthIndicatorResult => {
        const { config } = this.config;
        return this.indicator.check('config').up({
          source: config.source,
          bots: config.bots.length,
          routes: config.routes.length,
        });
      },
      ...[...this.registry.readinessChecks()].map(
        ([name, check]) =>
          async (): Promise<HealthIndicatorResult> => {
            const session = this.indicator.check(name);
            try {
              const result = await withTimeout(
                Promise.resolve().then(check),
                HEALTH_SOURCE_TIMEOUT_MS,
              );
              return result.ready ? session.up(result.detail) : session.down(result.detail);
            } catch (error) {
              return session.down({ message: errorMessage(error) });
            }
          },
      ),
    ];
    return this.health.check(checks);
  }

  /**
   * SPEC section 7: the operator's summary. 200 when ok or degraded (a bot unhealthy);
   * 503, with what is known, when Redis does not answer.
   */
  @Get('healthz')
  @RouteConfig(HEALTHZ_DOC)
  @HttpCode(HttpStatus.OK)
  async healthz() {
    const redisUp = await pingWithin(this.redis, REDIS_PING_TIMEOUT_MS);
    const [bots, summary, routes] = await Promise.all([
      this.bots.read({ redis: redisUp }),
      this.registry.summary(),
      redisUp ? this.routes() : Promise.resolve(undefined),
    ]);
    const body: Record<string, unknown> = {
      status: redisUp && bots.every((b) => b.healthy) ? 'ok' : 'degraded',
      service: this.config.service,
      polling: bots.some((b) => b.polling),
      bots,
    };
    if (routes) body.routes = routes;
    // Features add fields (the gateway's client count); they never replace the spec's.
    for (const [key, value] of Object.entries(summary)) if (!(key in body)) body[key] = value;
    if (!redisUp) {
      throw new HttpException(
        { ...body, error: 'Redis does not answer' },
        HttpStatus.SERVICE_UNAVAILABLE,
      );
    }
    return body;
  }

  /**
   * Every push route with why it fails, if it does. A failing route leaves `status`
   * alone: the spec makes it the bots' health, and the answer says which route and why.
   */
  private async routes(): Promise<{ name: string; failing: RouteFailing | null }[] | undefined> {
    const names = this.config.config.routes.map((route) => route.name);
    try {
      const failing = await withTimeout(readFailingRoutes(this.ctx, names), REDIS_PING_TIMEOUT_MS);
      return names.map((name) => ({ name, failing: failing.get(name) ?? null }));
    } catch {
      return undefined;
    }
  }
}
