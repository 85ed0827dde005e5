import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import type { BotConfig, RelaygramConfig } from '@relaygram/config';
import { BotStateField, errorMessage } from '@relaygram/contracts';
import { displayUrl, RELAYGRAM_LOGGER, RelaygramMetrics } from '@relaygram/observability';
import type { Logger } from 'pino';
import { IngressBots } from '../bots/ingress-bots';
import { IngressTelegramClients } from '../bots/ingress-telegram';
import { assessWebhookInfo } from '../health/bot-health-assessment';
import { INGRESS_OPTIONS, type IngressOptions } from '../ingress.options';
import { IngressStore } from '../state/ingress-store';
import {
  setWebhookParams,
  webhookSettingsChanged,
  webhookSettingsFingerprint,
  type WebhookInfo,
} from './webhook-settings';

interface ManagedBot {
  /** setWebhook is still to be called (start, reload with new settings, or a failure). */
  needsSet: boolean;
  nextSetAt: number;
  /** The last problem logged, so a lasting one is logged once. */
  lastProblem?: string;
}

/**
 * Keeps Telegram's webhook of every `mode: webhook, manage: true` bot as configured.
 *
 * At start (and when a reload changes a bot's webhook settings) one replica, the one
 * that claims the settings in the bot's `webhookLock`, calls setWebhook with the
 * configured URL, secret, allowed_updates and max_connections, never dropping pending
 * updates. Then
 * getWebhookInfo is read once per period by whichever replica claims the period in the
 * bot's state hash, and the answer is stored there, so every replica's /healthz shows
 * it. Drift is reported, not repaired: a URL set by hand (or by an old deployment) is an
 * operator's call, made with `relaygram webhook set`.
 */
@Injectable()
export class WebhookManager implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly managed = new Map<string, ManagedBot>();
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly bots: IngressBots,
    private readonly clients: IngressTelegramClients,
    private readonly store: IngressStore,
    @Inject(INGRESS_OPTIONS) private readonly options: IngressOptions,
    @Inject(RELAYGRAM_LOGGER) private readonly logger: Logger,
    private readonly metrics: RelaygramMetrics,
  ) {}

  onApplicationBootstrap(): void {
    this.apply(this.bots.current.config, undefined);
    this.tick();
  }

  /** A bot's getWebhookInfo period: its `check_every`, unless the options override it. */
  private checkEveryMs(bot: BotConfig): number {
    return this.options.webhook.watchIntervalMs ?? bot.webhook?.checkEveryMs ?? 60_000;
  }

  /** Ticks often enough for the shortest period of the managed bots. */
  private restartTimer(config: RelaygramConfig): void {
    const periods = config.bots
      .filter((bot) => this.managed.has(bot.id))
      .map((bot) => this.checkEveryMs(bot));
    const shortest = Math.min(this.options.webhook.setRetryMs, ...periods);
    clearInterval(this.timer);
    this.timer = setInterval(() => this.tick(), Math.max(50, Math.floor(shortest / 4)));
    this.timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.ticking;
  }

  /** Follows a (re)loaded config: bots new to management, or with new settings, get setWebhook. */
  apply(config: RelaygramConfig, previous: RelaygramConfig | undefined): void {
    const seen = new Set<string>();
    for (const bot of config.bots) {
      if (bot.mode !== 'webhook' || !bot.webhook?.manage) continue;
      seen.add(bot.id);
      const before = previous?.bots.find((b) => b.id === bot.id);
      const entry = this.managed.get(bot.id);
      if (!entry || !before || webhookSettingsChanged(before, bot)) {
        this.managed.set(bot.id, { needsSet: true, nextSetAt: 0 });
      }
    }
    for (const id of this.managed.keys()) if (!seen.has(id)) this.managed.delete(id);
    if (!this.stopped) this.restartTimer(config);
    if (previous) this.tick();
  }

  private tick(): void {
    if (this.stopped || this.ticking) return;
    this.ticking = Promise.all([...this.managed.keys()].map((id) => this.tickBot(id))).then(
      () => {
        this.ticking = undefined;
      },
      () => {
        this.ticking = undefined;
      },
    );
  }

  private async tickBot(id: string): Promise<void> {
    const entry = this.managed.get(id);
    const bot = this.bots.get(id)?.config;
    if (!entry || !bot) return;
    if (entry.needsSet && Date.now() >= entry.nextSetAt) {
      if (await this.setWebhook(bot, entry)) return;
    }
    try {
      const claimed = await this.store.redis.rgClaimPeriod(
        1,
        this.store.keys.botState(id),
        BotStateField.WebhookCheckedAt,
        this.checkEveryMs(bot),
      );
      if (claimed === 1) await this.refresh(bot, entry);
    } catch (error) {
      this.logger.warn({ bot: id, err: error }, 'webhook watch skipped: Redis failed');
    }
  }

  /**
   * Calls setWebhook unless another replica claimed the same settings within the lock
   * TTL; true when this replica called it (the info is then fresh). A failure frees the
   * claim, and this replica retries after `setRetryMs`.
   */
  private async setWebhook(bot: BotConfig, entry: ManagedBot): Promise<boolean> {
    const lockKey = this.store.keys.webhookLock(bot.id);
    const stateKey = this.store.keys.botState(bot.id);
    const fingerprint = webhookSettingsFingerprint(bot);
    try {
      const claimed = await this.store.redis.rgClaimSettings(
        1,
        lockKey,
        fingerprint,
        this.options.webhook.lockTtlMs,
      );
      if (claimed !== 1) {
        // Another replica is setting (or just set) these very settings.
        entry.needsSet = false;
        return false;
      }
    } catch (error) {
      entry.nextSetAt = Date.now() + this.options.webhook.setRetryMs;
      this.logger.warn({ bot: bot.id, err: error }, 'setWebhook postponed: Redis failed');
      return false;
    }
    try {
      const client = this.clients.get(bot.id);
      if (!client) throw new Error('no Telegram client for this bot');
      await client.call('setWebhook', setWebhookParams(bot));
    } catch (error) {
      entry.nextSetAt = Date.now() + this.options.webhook.setRetryMs;
      const problem = `setWebhook failed: ${errorMessage(error)}`;
      this.logger.error({ bot: bot.id, err: error }, problem);
      await this.store.redis.rgUnlock(1, lockKey, fingerprint).catch(() => 0);
      await this.store.redis.hset(stateKey, BotStateField.WebhookSetError, problem).catch(() => 0);
      this.metrics.botHealthy.labels(bot.id).set(0);
      return false;
    }
    entry.needsSet = false;
    this.logger.info(
      { bot: bot.id, url: displayUrl(bot.webhook?.url ?? '') },
      'webhook set (pending updates kept)',
    );
    await this.store.redis
      .multi()
      .hdel(stateKey, BotStateField.WebhookSetError)
      .hset(stateKey, BotStateField.WebhookSetAt, Date.now())
      .exec()
      .catch(() => null);
    await this.refresh(bot, entry);
    return true;
  }

  /** Reads getWebhookInfo and stores it for every replica's /healthz. */
  private async refresh(bot: BotConfig, entry: ManagedBot): Promise<void> {
    const stateKey = this.store.keys.botState(bot.id);
    const client = this.clients.get(bot.id);
    if (!client || !bot.webhook) return;
    let problem: string | undefined;
    try {
      const info = await client.call<WebhookInfo>('getWebhookInfo');
      await this.store.redis.hset(
        stateKey,
        BotStateField.WebhookInfo,
        JSON.stringify(info),
        BotStateField.WebhookInfoAt,
        Date.now(),
      );
      await this.store.redis.hdel(stateKey, BotStateField.WebhookInfoError);
      problem = assessWebhookInfo(info, bot.webhook.url, Date.now()).problem;
    } catch (error) {
      problem = `getWebhookInfo failed: ${errorMessage(error)}`;
      await this.store.redis.hset(stateKey, BotStateField.WebhookInfoError, problem).catch(() => 0);
    }
    this.metrics.botHealthy.labels(bot.id).set(problem ? 0 : 1);
    if (problem !== entry.lastProblem) {
      if (problem) this.logger.warn({ bot: bot.id }, `webhook unhealthy: ${problem}`);
      else if (entry.lastProblem) this.logger.info({ bot: bot.id }, 'webhook healthy again');
      entry.lastProblem = problem;
    }
  }
}
