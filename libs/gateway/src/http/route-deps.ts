import type { BroadcastStore, OutboxStore } from '@relaygram/queue';
import type { Logger } from 'pino';
import type { IdempotencyStore } from '../idempotency/idempotency-store';
import type { GatewayPacing } from '../pacing/gateway-pacing.service';
import type { PullUpdatesService } from '../pull/pull-updates.service';
import type { GatewayTelegramService } from '../telegram/gateway-telegram.service';

/** What the gateway's Fastify routes use, handed over once when they are registered. */
export interface GatewayRouteDeps {
  telegram: GatewayTelegramService;
  pull: PullUpdatesService;
  pacing: GatewayPacing;
  idempotency: IdempotencyStore;
  outbox: OutboxStore;
  broadcasts: BroadcastStore;
  /** Whether the client may start and steer broadcasts (its `broadcast: true`). */
  broadcastAllowed: (client: string) => boolean;
  logger: Logger;
}
