import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@relaygram/config';
import { RelaygramMetrics } from '@relaygram/observability';
import { TelegramClients } from '@relaygram/telegram';

/**
 * Ingress's own Bot API clients (getUpdates, webhook management, getMe), one per bot.
 * Closed last, once pollers and the webhook watcher have stopped using them.
 */
@Injectable()
export class IngressTelegramClients extends TelegramClients implements OnApplicationShutdown {
  constructor(config: ConfigService, metrics: RelaygramMetrics) {
    super(config.config, { onCall: (event) => metrics.recordTelegramCall(event) });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.closeAll();
  }
}
