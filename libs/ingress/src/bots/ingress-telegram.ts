import { Inject, Injectable, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { ConfigService } from '@relaygram/config';
import { RelaygramMetrics } from '@relaygram/observability';
import { TelegramClients } from '@relaygram/telegram';

/** Ingress's own Bot API clients (getUpdates, webhook management, getMe), one per bot. */
export const ingressTelegramProvider: Provider = {
  provide: TelegramClients,
  inject: [ConfigService, RelaygramMetrics],
  useFactory: (config: ConfigService, metrics: RelaygramMetrics) =>
    new TelegramClients(config.config, { onCall: (event) => metrics.recordTelegramCall(event) }),
};

/** Closes the clients last, once pollers and the webhook watcher have stopped using them. */
@Injectable()
export class IngressTelegramShutdown implements OnApplicationShutdown {
  constructor(@Inject(TelegramClients) private readonly clients: TelegramClients) {}

  async onApplicationShutdown(): Promise<void> {
    await this.clients.closeAll();
  }
}
