import {
  Inject,
  Injectable,
  Optional,
  type OnApplicationShutdown,
  type OnModuleDestroy,
} from '@nestjs/common';
import { ConfigService } from '@relaygram/config';
import { RELAYGRAM_LOGGER, RelaygramMetrics } from '@relaygram/observability';
import type { Logger } from 'pino';
import { TelegramClients, type TelegramClient } from '@relaygram/telegram';
import {
  GATEWAY_OPTIONS,
  resolveGatewayOptions,
  type GatewayOptions,
  type ResolvedGatewayOptions,
} from '../gateway.options';
import { ClientDirectory } from '../access/client-directory';

/** Time the Telegram calls still running when the HTTP server has closed get to end. */
const CALLS_DRAIN_MS = 5_000;

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
    @Inject(RELAYGRAM_LOGGER) private readonly logger: Logger,
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

  /**
   * After the HTTP server closed: in-flight calls finish first, and those a client no
   * longer waits for are cut off after a while rather than holding the shutdown.
   */
  async onApplicationShutdown(): Promise<void> {
    const cut = await this.#clients.closeAll(CALLS_DRAIN_MS);
    if (cut.length > 0) {
      this.logger.warn(
        `shutdown: Telegram calls of ${cut.join(', ')} still open after ${CALLS_DRAIN_MS} ms, cut off`,
      );
    }
  }
}
