import {
  Inject,
  Injectable,
  Optional,
  type OnApplicationShutdown,
  type OnModuleDestroy,
} from '@nestjs/common';
import { ConfigService } from '@relaygram/config';
import { RelaygramMetrics } from '@relaygram/observability';
import { TelegramClients, type TelegramClient } from '@relaygram/telegram';
import {
  GATEWAY_OPTIONS,
  resolveGatewayOptions,
  type GatewayOptions,
  type ResolvedGatewayOptions,
} from '../gateway.options';
import { ClientDirectory } from '../access/client-directory';

/**
 * The gateway's view of the current config: one keep-alive pool per bot and the
 * client directory, both built once and rebuilt only on a reload. Requests read the
 * two fields, never build anything.
 */
@Injectable()
export class GatewayTelegramService implements OnModuleDestroy, OnApplicationShutdown {
  readonly options: ResolvedGatewayOptions;
  #directory: ClientDirectory;
  readonly #clients: TelegramClients;
  readonly #unsubscribe: () => void;

  constructor(
    config: ConfigService,
    metrics: RelaygramMetrics,
    @Optional() @Inject(GATEWAY_OPTIONS) options?: GatewayOptions,
  ) {
    this.options = resolveGatewayOptions(options);
    this.#directory = new ClientDirectory(config.config);
    this.#clients = new TelegramClients(config.config, {
      onCall: (event) => metrics.recordTelegramCall(event),
      timeoutMs: this.options.telegramTimeoutMs,
      connections: this.options.connectionsPerBot,
    });
    this.#unsubscribe = config.onReload(async (next) => {
      // The pools switch synchronously inside replace(), before the directory names
      // the new bots; retired pools then close once their calls are done.
      const retired = this.#clients.replace(next);
      this.#directory = new ClientDirectory(next);
      await retired;
    });
  }

  get directory(): ClientDirectory {
    return this.#directory;
  }

  client(botId: string): TelegramClient | undefined {
    return this.#clients.get(botId);
  }

  onModuleDestroy(): void {
    this.#unsubscribe();
  }

  /** After the HTTP server stopped taking requests: in-flight calls finish first. */
  async onApplicationShutdown(): Promise<void> {
    await this.#clients.closeAll();
  }
}
