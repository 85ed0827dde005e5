import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { BotStateField } from '@relaygram/contracts';
import { RELAYGRAM_LOGGER } from '@relaygram/observability';
import type { TelegramUser } from '@relaygram/telegram';
import type { Logger } from 'pino';
import { INGRESS_OPTIONS, type IngressOptions } from '../ingress.options';
import { abortableDelay } from '../state/abortable-delay';
import { IngressStore } from '../state/ingress-store';
import { IngressBots } from './ingress-bots';
import { IngressTelegramClients } from './ingress-telegram';

/**
 * Learns the username of bots whose config has none, for `/cmd@username` matching: from
 * the bot's state in Redis when a replica learned it before (so replicas agree), else
 * from getMe, retried until it answers. Until it is known, a suffixed command matches
 * no route (it could be addressed to another bot).
 */
@Injectable()
export class BotUsernames implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly learning = new Set<string>();
  private readonly stopped = new AbortController();

  constructor(
    private readonly bots: IngressBots,
    private readonly clients: IngressTelegramClients,
    private readonly store: IngressStore,
    @Inject(INGRESS_OPTIONS) private readonly options: IngressOptions,
    @Inject(RELAYGRAM_LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.learnMissing();
  }

  onModuleDestroy(): void {
    this.stopped.abort();
  }

  /** Starts learning every bot of the current config whose username is unknown. */
  learnMissing(): void {
    for (const bot of this.bots.current.byId.values()) {
      if (bot.username === undefined && !this.learning.has(bot.id)) {
        this.learning.add(bot.id);
        void this.learn(bot.id).finally(() => this.learning.delete(bot.id));
      }
    }
  }

  private async learn(id: string): Promise<void> {
    const key = this.store.keys.botState(id);
    while (!this.stopped.signal.aborted) {
      const bot = this.bots.get(id);
      if (!bot || bot.username !== undefined) return;
      const numericId = bot.config.numericId;
      try {
        const [cached, of] = await this.store.redis.hmget(
          key,
          BotStateField.Username,
          BotStateField.UsernameOf,
        );
        if (cached && of === numericId) {
          this.remember(id, numericId, cached);
          return;
        }
        const me = await this.clients
          .get(id)
          ?.call<TelegramUser>('getMe', undefined, { signal: this.stopped.signal });
        if (me?.username) {
          this.remember(id, numericId, me.username);
          await this.store.redis.hset(
            key,
            BotStateField.Username,
            me.username,
            BotStateField.UsernameOf,
            String(me.id),
          );
          this.logger.info({ bot: id, username: me.username }, 'bot username learned from getMe');
          return;
        }
      } catch (error) {
        if (this.stopped.signal.aborted) return;
        this.logger.warn(
          { bot: id, err: error },
          'bot username not learned yet: /cmd@username commands match no route until it is',
        );
      }
      await abortableDelay(this.options.usernameRetryMs, this.stopped.signal);
    }
  }

  /** Sets the username on the current entry of the bot, if it still has the same token. */
  private remember(id: string, numericId: string, username: string): void {
    const bot = this.bots.get(id);
    if (bot && bot.config.numericId === numericId && bot.username === undefined) {
      bot.username = username;
    }
  }
}
