import { Injectable, type OnModuleInit } from '@nestjs/common';
import { ConfigService, type BotConfig } from '@relaygram/config';
import { HealthRegistry, type BotHealth } from '@relaygram/observability';
import { errorMessage, Feature } from '@relaygram/contracts';
import { TelegramError, type TelegramClient } from '@relaygram/telegram';
import { GatewayTelegramService } from '../telegram/gateway-telegram.service';

interface Reachability {
  reachable: boolean;
  problem?: string;
  checkedAt: number;
}

/**
 * The gateway's part of /healthz: per bot, whether Telegram answers its getMe, from a
 * cache so that probes never turn into a stream of Bot API calls.
 */
@Injectable()
export class GatewayHealthService implements OnModuleInit {
  readonly #states = new WeakMap<TelegramClient, Reachability>();
  readonly #pending = new WeakMap<TelegramClient, Promise<Reachability>>();

  constructor(
    private readonly registry: HealthRegistry,
    private readonly config: ConfigService,
    private readonly telegram: GatewayTelegramService,
  ) {}

  onModuleInit(): void {
    this.registry.addBotHealthSource(Feature.Gateway, () => this.bots());
    this.registry.addSummarySource(Feature.Gateway, () => ({
      clients: this.telegram.directory.clientCount,
    }));
    this.registry.addReadinessCheck(Feature.Gateway, () => ({
      ready: true,
      detail: {
        clients: this.telegram.directory.clientCount,
        bots: this.config.config.bots.length,
      },
    }));
  }

  async bots(): Promise<BotHealth[]> {
    const bots = this.config.config.bots;
    const states = await Promise.all(bots.map((bot) => this.reachability(bot)));
    const directory = this.telegram.directory;
    return bots.map((bot, i) => {
      const state = states[i] as Reachability;
      const health: BotHealth = {
        id: bot.id,
        mode: bot.mode,
        // The gateway never polls; ingress says whether this bot's poller runs.
        polling: false,
        healthy: state.reachable,
        telegram_reachable: state.reachable,
        clients: directory.clientsOf(bot.id),
      };
      if (state.problem) health.problem = state.problem;
      return health;
    });
  }

  /**
   * Cached per client: a reload that changes a bot's token or the API base gives it a
   * new client, and with it a fresh check.
   */
  async reachability(bot: BotConfig): Promise<Reachability> {
    const client = this.telegram.client(bot.id);
    if (!client) {
      return {
        reachable: false,
        problem: 'no Telegram client for this bot',
        checkedAt: Date.now(),
      };
    }
    const options = this.telegram.options;
    const state = this.#states.get(client);
    const ttl = state?.reachable ? options.healthTtlMs : options.healthFailureTtlMs;
    if (state && Date.now() - state.checkedAt < ttl) return state;
    let pending = this.#pending.get(client);
    if (!pending) {
      pending = this.#check(client).then((fresh) => {
        this.#states.set(client, fresh);
        this.#pending.delete(client);
        return fresh;
      });
      this.#pending.set(client, pending);
    }
    return pending;
  }

  async #check(client: TelegramClient): Promise<Reachability> {
    const checkedAt = Date.now();
    try {
      await client.getMe({ timeoutMs: this.telegram.options.healthTimeoutMs });
      return { reachable: true, checkedAt };
    } catch (error) {
      const problem =
        error instanceof TelegramError && error.errorCode === 401
          ? 'Telegram refused the bot token (401 Unauthorized)'
          : `getMe failed: ${errorMessage(error)}`;
      return { reachable: false, problem, checkedAt };
    }
  }
}
