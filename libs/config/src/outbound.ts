import type { BotConfig, OutboundConfig } from './config.types';

/** `bots[].outbound` when the file leaves it out: Telegram's flood limits (TELEGRAM.md). */
export const DEFAULT_OUTBOUND: OutboundConfig = Object.freeze({
  enabled: true,
  perSecond: 30,
  perChatPerSecond: 1,
  chatBurst: 3,
  perGroupPerMinute: 20,
  maxWaitMs: 5_000,
  broadcastShare: 0.8,
});

/** A bot's budgets; the defaults for a bot built by hand without them. */
export function outboundOf(bot: Pick<BotConfig, 'outbound'>): OutboundConfig {
  return bot.outbound ?? DEFAULT_OUTBOUND;
}
