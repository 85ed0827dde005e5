import { Inject, Injectable, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { ConfigService } from '@relaygram/config';
import { RelaygramMetrics } from '@relaygram/observability';
import { TelegramClients, type TelegramCallEvent } from '@relaygram/telegram';

function recordCall(metrics: RelaygramMetrics, event: TelegramCallEvent): void {
  const code = String(event.ok ? 200 : (event.errorCode ?? 0));
  const labels = [event.botId ?? '', event.method, code] as const;
  metrics.telegramCalls.labels(...labels).inc();
  if (!event.ok) metrics.telegramErrors.labels(...labels).inc();
}

/** Ingress's own Bot API clients (getUpdates, webhook management, getMe), one per bot. */
export const ingressTelegramProvider: Provider = {
  provide: TelegramClients,
  inject: [ConfigService, RelaygramMetrics],
  useFactory: (config: ConfigService, metrics: RelaygramMetrics) =>
    new TelegramClients(config.config, { onCall: (event) => recordCall(metrics, event) }),
};

/** Closes the clients last, once pollers and the webhook watcher have stopped using them. */
@Injectable()
export class IngressTelegramShutdown implements OnApplicationShutdown {
  constructor(@Inject(TelegramClients) private readonly clients: TelegramClients) {}

  async onApplicationShutdown(): Promise<void> {
    await this.clients.closeAll();
  }
}
