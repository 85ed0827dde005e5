import { Feature } from '@relaygram/contracts';
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { ConfigService } from '@relaygram/config';
import { RELAYGRAM_LOGGER } from '@relaygram/observability';
import { BroadcastStore, OutboxStore } from '@relaygram/queue';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { dropInRoutes } from './drop-in/drop-in.routes';
import { IdempotencyStore } from './idempotency/idempotency-store';
import { GatewayPacing } from './pacing/gateway-pacing.service';
import { REST_PREFIX, restApiRoutes } from './rest/rest-api.routes';
import { GatewayTelegramService } from './telegram/gateway-telegram.service';
import { PullUpdatesService } from './pull/pull-updates.service';

/**
 * Adds the gateway's routes to the app's Fastify instance as encapsulated plugins,
 * before it starts listening. Their body parsers, multipart support and error
 * handlers stay inside them, so in the standalone process ingress and the other
 * features parse their bodies exactly as they would alone.
 */
@Injectable()
export class GatewayRoutesRegistrar implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly telegram: GatewayTelegramService,
    private readonly pacing: GatewayPacing,
    private readonly idempotency: IdempotencyStore,
    private readonly pull: PullUpdatesService,
    private readonly outbox: OutboxStore,
    private readonly broadcasts: BroadcastStore,
    private readonly config: ConfigService,
    @Inject(RELAYGRAM_LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    const adapter = this.adapterHost.httpAdapter;
    // An application context without HTTP (the CLI) serves nothing.
    if (!adapter) return;
    if (adapter.getType() !== 'fastify') {
      throw new Error('the gateway needs @nestjs/platform-fastify');
    }
    const fastify = adapter.getInstance<FastifyInstance>();
    const deps = {
      telegram: this.telegram,
      pacing: this.pacing,
      idempotency: this.idempotency,
      pull: this.pull,
      outbox: this.outbox,
      broadcasts: this.broadcasts,
      // The current config's: a reload that grants or takes the flag applies at once.
      broadcastAllowed: (client: string) =>
        this.config.config.clients.some((c) => c.name === client && c.broadcast === true),
      logger: this.logger.child({ component: Feature.Gateway }),
    };
    void fastify.register(restApiRoutes(deps), { prefix: REST_PREFIX });
    void fastify.register(dropInRoutes(deps));
  }
}
