import { Injectable } from '@nestjs/common';
import { ConfigService, type BotConfig, type RelaygramConfig } from '@relaygram/config';
import { UpdateOutcome, UpdateSource } from '@relaygram/contracts';
import { RelaygramMetrics } from '@relaygram/observability';
import { createSecretMatcher, safeEqual, type SecretMatcher } from '@relaygram/signing';

type OutcomeCounters = Readonly<Record<UpdateOutcome, { inc(): void }>>;

/** One configured bot as ingress sees it; built once per config, never per request. */
export interface IngressBot {
  readonly id: string;
  readonly config: BotConfig;
  /** The config this bot belongs to: routes are selected from it, so bot and routes agree. */
  readonly source: RelaygramConfig;
  /** Compares the webhook secret header in constant time; undefined for polling bots. */
  readonly secret: SecretMatcher | undefined;
  /** For `/cmd@username`: from the config, else learned from getMe; undefined until known. */
  username: string | undefined;
  /** `relaygram_updates_received_total` children, bound once. */
  readonly received: Readonly<Record<UpdateSource, OutcomeCounters>>;
}

/** Every bot of one config, looked up by id on the webhook path. */
export interface IngressBotSet {
  readonly config: RelaygramConfig;
  readonly byId: ReadonlyMap<string, IngressBot>;
  /** The bot of `POST /webhooks/telegram`, when there is a default bot. */
  readonly defaultBot: IngressBot | undefined;
}

/**
 * The bots of the current config, rebuilt on reload and swapped in one assignment, so a
 * request in flight keeps the set it started with and no request sees half of each.
 * Secret matchers and metric children are made here, off the request path.
 */
@Injectable()
export class IngressBots {
  #current: IngressBotSet;

  constructor(
    config: ConfigService,
    private readonly metrics: RelaygramMetrics,
  ) {
    this.#current = this.build(config.config, undefined);
  }

  get current(): IngressBotSet {
    return this.#current;
  }

  get(id: string): IngressBot | undefined {
    return this.#current.byId.get(id);
  }

  /** Builds the set of a reloaded config and switches to it; learned usernames carry over. */
  replace(config: RelaygramConfig): IngressBotSet {
    this.#current = this.build(config, this.#current);
    return this.#current;
  }

  private build(config: RelaygramConfig, previous: IngressBotSet | undefined): IngressBotSet {
    const byId = new Map<string, IngressBot>();
    let defaultBot: IngressBot | undefined;
    for (const bot of config.bots) {
      const old = previous?.byId.get(bot.id);
      // A learned username belongs to the token it was learned with.
      const learned =
        old && safeEqual(old.config.token.reveal(), bot.token.reveal()) ? old.username : undefined;
      const entry: IngressBot = {
        id: bot.id,
        config: bot,
        source: config,
        secret:
          bot.mode === 'webhook' && bot.webhook
            ? createSecretMatcher([bot.webhook.secretToken.reveal()])
            : undefined,
        username: bot.username || learned,
        received: {
          [UpdateSource.Webhook]: this.counters(bot.id, UpdateSource.Webhook),
          [UpdateSource.Polling]: this.counters(bot.id, UpdateSource.Polling),
        },
      };
      byId.set(bot.id, entry);
      if (bot.default) defaultBot = entry;
    }
    return { config, byId, defaultBot };
  }

  private counters(bot: string, source: UpdateSource): OutcomeCounters {
    const counter = this.metrics.updatesReceived;
    return {
      [UpdateOutcome.Queued]: counter.labels(bot, source, UpdateOutcome.Queued),
      [UpdateOutcome.Duplicate]: counter.labels(bot, source, UpdateOutcome.Duplicate),
      [UpdateOutcome.Ignored]: counter.labels(bot, source, UpdateOutcome.Ignored),
      [UpdateOutcome.Rejected]: counter.labels(bot, source, UpdateOutcome.Rejected),
    };
  }
}
