import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { ConfigService } from '@relaygram/config';
import { RelaygramMetrics } from '@relaygram/observability';
import { TelegramClients, type TelegramClient } from '@relaygram/telegram';

/**
 * The admin API's own Bot API clients (webhook info and set), kept in step with config
 * reloads. A handful of calls an hour: sharing a feature's clients would tie the admin
 * lib to that feature.
 */
@Injectable()
export class AdminTelegramClients implements OnModuleDestroy {
  private readonly clients: TelegramClients;
  private readonly unsubscribe: () => void;

  constructor(config: ConfigService, metrics: RelaygramMetrics) {
    this.clients = new TelegramClients(config.config, {
      onCall: (event) => metrics.recordTelegramCall(event),
      timeoutMs: 15_000,
      connections: 2,
    });
    this.unsubscribe = config.onReload((next) => this.clients.replace(next));
  }

  get(botId: string): TelegramClient | undefined {
    return this.clients.get(botId);
  }

  async onModuleDestroy(): Promise<void> {
    this.unsubscribe();
    await this.clients.closeAll();
  }
}
