import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { ConfigService, type RelaygramConfig } from '@relaygram/config';
import { RELAYGRAM_LOGGER } from '@relaygram/observability';
import type { Logger } from 'pino';
import { BotUsernames } from '../bots/bot-usernames';
import { IngressBots } from '../bots/ingress-bots';
import { IngressTelegramClients } from '../bots/ingress-telegram';
import { PollingAdapter } from '../polling/polling-adapter';
import { WebhookManager } from '../webhook/webhook-manager';

/**
 * Applies a reloaded config (SIGHUP) to ingress, in an order that drops nothing:
 * 1. the bot set (webhook lookup, secrets, routes) is swapped in one assignment, so a
 *    request in flight finishes with the set it started with and the next one sees
 *    the new set;
 * 2. pollers of removed or changed bots stop (their waiting long poll is aborted, a
 *    batch in progress is finished and its offset saved) before
 * 3. the Telegram clients are swapped (a retired client waits for its calls);
 * 4. pollers of new polling bots start, webhooks of new or changed bots are set, and
 *    usernames of new bots are learned.
 */
@Injectable()
export class IngressConfigReload implements OnModuleInit, OnModuleDestroy {
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly config: ConfigService,
    private readonly bots: IngressBots,
    private readonly clients: IngressTelegramClients,
    private readonly polling: PollingAdapter,
    private readonly webhooks: WebhookManager,
    private readonly usernames: BotUsernames,
    @Inject(RELAYGRAM_LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    this.unsubscribe = this.config.onReload((next, previous) => this.apply(next, previous));
  }

  onModuleDestroy(): void {
    this.unsubscribe?.();
  }

  async apply(next: RelaygramConfig, previous: RelaygramConfig): Promise<void> {
    this.bots.replace(next);
    await this.polling.stopOutdated(next);
    await this.clients.replace(next);
    this.polling.startMissing(next);
    this.webhooks.apply(next, previous);
    this.usernames.learnMissing();
    this.logger.info(
      { bots: next.bots.map((b) => `${b.id} (${b.mode})`) },
      'ingress follows the reloaded config',
    );
  }
}
