import {
  Inject,
  Injectable,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import type { BotConfig, RelaygramConfig, Secret } from '@relaygram/config';
import type { PollerState } from '@relaygram/contracts';
import { safeEqual } from '@relaygram/signing';
import { RELAYGRAM_LOGGER, RelaygramMetrics } from '@relaygram/observability';
import type { Logger } from 'pino';
import { IngressBots } from '../bots/ingress-bots';
import { IngressTelegramClients } from '../bots/ingress-telegram';
import { INGRESS_OPTIONS, type IngressOptions } from '../ingress.options';
import { UpdateIntake } from '../intake/update-intake';
import { IngressStore } from '../state/ingress-store';
import { BotPoller } from './bot-poller';
import { PollerLease } from './poller-lease';

/** This replica's view of one poller. */
export interface LocalPoller {
  bot: string;
  state: PollerState;
  /** Whether this replica holds the bot's lease (and so is the one polling). */
  polling: boolean;
  problem?: string;
}

interface Running {
  poller: BotPoller;
  /** What the poller was built from; a change (or another token) restarts it. */
  fingerprint: string;
  token: Secret;
}

function fingerprint(bot: BotConfig, config: RelaygramConfig): string {
  return `${bot.mode}\n${config.telegram.apiBase}`;
}

/** Tokens are compared like every secret, with the one digest comparison. */
function unchanged(bot: BotConfig, config: RelaygramConfig, running: Running): boolean {
  return (
    fingerprint(bot, config) === running.fingerprint &&
    safeEqual(bot.token.reveal(), running.token.reveal())
  );
}

/**
 * Runs one BotPoller per `mode: polling` bot of the current config. Every replica runs
 * them; the lease decides which one polls. On reload, pollers of removed (or changed)
 * bots stop before the Telegram clients are swapped, and new ones start after.
 */
@Injectable()
export class PollingAdapter implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly pollers = new Map<string, Running>();
  private shuttingDown = false;

  constructor(
    private readonly bots: IngressBots,
    private readonly clients: IngressTelegramClients,
    private readonly intake: UpdateIntake,
    private readonly store: IngressStore,
    @Inject(INGRESS_OPTIONS) private readonly options: IngressOptions,
    @Inject(RELAYGRAM_LOGGER) private readonly logger: Logger,
    private readonly metrics: RelaygramMetrics,
  ) {}

  onApplicationBootstrap(): void {
    this.startMissing(this.bots.current.config);
  }

  /** SIGTERM: every poller finishes its batch, saves its offset and frees its lease. */
  async beforeApplicationShutdown(): Promise<void> {
    this.shuttingDown = true;
    const running = [...this.pollers.values()];
    this.pollers.clear();
    await Promise.all(running.map(({ poller }) => poller.stop()));
  }

  /** Stops the pollers the new config removes or changes (mode, token or API base). */
  async stopOutdated(config: RelaygramConfig): Promise<void> {
    const stopping: Promise<void>[] = [];
    for (const [id, running] of this.pollers) {
      const bot = config.bots.find((b) => b.id === id);
      if (bot && bot.mode === 'polling' && unchanged(bot, config, running)) {
        continue;
      }
      this.pollers.delete(id);
      this.logger.info(
        { bot: id },
        bot ? 'bot changed: restarting its poller' : 'bot removed: poller stopped',
      );
      stopping.push(running.poller.stop());
    }
    await Promise.all(stopping);
  }

  /** Starts a poller for every polling bot of the config that has none. */
  startMissing(config: RelaygramConfig): void {
    if (this.shuttingDown) return;
    for (const bot of config.bots) {
      if (bot.mode !== 'polling' || this.pollers.has(bot.id)) continue;
      const lease = new PollerLease(this.store, bot.id, this.options.polling.leaseTtlMs);
      const poller = new BotPoller(bot.id, {
        bots: this.bots,
        clients: this.clients,
        intake: this.intake,
        lease,
        options: this.options.polling,
        logger: this.logger,
        metrics: this.metrics,
      });
      this.pollers.set(bot.id, { poller, fingerprint: fingerprint(bot, config), token: bot.token });
      poller.start();
    }
  }

  /** What the pollers of this replica are doing. */
  local(): LocalPoller[] {
    return [...this.pollers.values()].map(({ poller }) => ({
      bot: poller.botId,
      state: poller.state,
      polling: poller.polling,
      ...(poller.problem ? { problem: poller.problem } : {}),
    }));
  }

  /** The local poller of one bot, if this replica runs one. */
  poller(bot: string): LocalPoller | undefined {
    return this.local().find((p) => p.bot === bot);
  }
}
