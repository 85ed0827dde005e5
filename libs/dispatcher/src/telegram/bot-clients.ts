import type { BotConfig, RelaygramConfig } from '@relaygram/config';
import type { RelaygramMetrics } from '@relaygram/observability';
import { TelegramClients, type TelegramClient } from '@relaygram/telegram';
import type { Logger } from 'pino';

export interface BotClientsOptions {
  /** What calls Telegram through them, as log lines name it: `outbox sends`, `broadcasts`. */
  user: string;
  /** Keep-alive connections per bot. */
  connections: number;
  /** Default per-call timeout. */
  timeoutMs?: number;
}

/**
 * The configured bots and a Bot API client for each, as one caller in the dispatcher
 * (webhook replies, the outbox, broadcasts) sees them across config reloads. Clients
 * that cannot be built (a config whose token or api_base the client refuses) leave
 * the caller without clients, saying so, until a reload brings usable ones; a reload
 * that cannot be used keeps the previous clients.
 */
export class BotClients {
  #clients: TelegramClients | undefined;
  #bots: ReadonlyMap<string, BotConfig>;

  constructor(
    config: RelaygramConfig,
    private readonly metrics: RelaygramMetrics,
    private readonly logger: Logger,
    private readonly options: BotClientsOptions,
  ) {
    this.#bots = botsById(config);
    this.#clients = this.#build(config);
  }

  /** Whether there are clients at all (none until a config's clients can be built). */
  get built(): boolean {
    return this.#clients !== undefined;
  }

  /** The bot's config, while the config has it. */
  bot(id: string): BotConfig | undefined {
    return this.#bots.get(id);
  }

  /** The bot's client; none while the clients cannot be built. */
  client(id: string): TelegramClient | undefined {
    return this.#clients?.get(id);
  }

  async reload(config: RelaygramConfig): Promise<void> {
    this.#bots = botsById(config);
    if (!this.#clients) {
      this.#clients = this.#build(config);
      return;
    }
    try {
      await this.#clients.replace(config);
    } catch (error) {
      this.logger.error(
        { err: error },
        `${this.options.user} keep the previous bots: the reloaded ones cannot be used`,
      );
    }
  }

  /** Closes every client after its calls, cutting those still running after `graceMs`. */
  async close(graceMs?: number): Promise<void> {
    await this.#clients?.closeAll(graceMs);
  }

  #build(config: RelaygramConfig): TelegramClients | undefined {
    try {
      return new TelegramClients(config, {
        connections: this.options.connections,
        timeoutMs: this.options.timeoutMs,
        onCall: (event) => this.metrics.recordTelegramCall(event),
      });
    } catch (error) {
      this.logger.error(
        { err: error },
        `${this.options.user} cannot reach Telegram until a reload brings usable bots: the Bot API clients cannot be built`,
      );
      return undefined;
    }
  }
}

function botsById(config: RelaygramConfig): ReadonlyMap<string, BotConfig> {
  return new Map(config.bots.map((bot) => [bot.id, bot]));
}
