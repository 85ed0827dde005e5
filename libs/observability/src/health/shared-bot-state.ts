import { BotStateField } from '@relaygram/contracts';
import type { QueueContext } from '@relaygram/queue';
import type { BotHealth } from './health-registry';
import { webhookProblem } from './webhook-drift';

export interface SharedBotConfig {
  id: string;
  mode: BotHealth['mode'];
  /** Webhook bots managed by Relaygram: the configured URL. */
  webhookUrl?: string;
}

function time(raw: string | undefined): string | undefined {
  const value = raw === undefined ? NaN : Number(raw);
  return Number.isFinite(value) ? new Date(value).toISOString() : undefined;
}

function parseInfo(raw: string | undefined): Record<string, unknown> | undefined {
  if (!raw) return undefined;
  try {
    const value: unknown = JSON.parse(raw);
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A bot's state as ingress stored it, for a process that runs no ingress (dispatcher,
 * gateway): a polling bot polls while some replica holds its lease, and is healthy
 * when that poller says `polling`; a webhook bot is judged on the getWebhookInfo the
 * watching replica stored. Undefined when ingress never wrote anything for the bot.
 */
export function parseSharedBotState(
  bot: SharedBotConfig,
  hash: Record<string, string>,
  leaseHeld: boolean,
  now = Date.now(),
): BotHealth | undefined {
  if (!Object.keys(hash).length && !leaseHeld) return undefined;
  if (bot.mode === 'polling') {
    const health: BotHealth = { id: bot.id, mode: 'polling', polling: leaseHeld, healthy: false };
    if (!leaseHeld) {
      health.state = 'stopped';
      health.problem = 'no replica polls this bot (the poller lease is free)';
      return health;
    }
    health.state = hash[BotStateField.PollerState] || 'polling';
    const since = time(hash[BotStateField.PollerSince]);
    if (since) health.since = since;
    health.healthy = health.state === 'polling';
    if (hash[BotStateField.PollerProblem]) health.problem = hash[BotStateField.PollerProblem];
    return health;
  }
  const health: BotHealth = { id: bot.id, mode: 'webhook', polling: false, healthy: true };
  const problems = [
    hash[BotStateField.WebhookSetError],
    hash[BotStateField.WebhookInfoError],
  ].filter((p): p is string => Boolean(p));
  const info = parseInfo(hash[BotStateField.WebhookInfo]);
  if (info) {
    health.webhook = { ...info };
    const checkedAt = time(hash[BotStateField.WebhookInfoAt]);
    if (checkedAt) health.webhook.checked_at = checkedAt;
    const drift = bot.webhookUrl ? webhookProblem(info, bot.webhookUrl, now) : undefined;
    if (drift) problems.push(drift);
  }
  if (problems.length) {
    health.healthy = false;
    health.problem = problems.join('; ');
  }
  return health;
}

export async function readSharedBotStates(
  ctx: QueueContext,
  bots: readonly SharedBotConfig[],
): Promise<BotHealth[]> {
  if (!bots.length) return [];
  const pipeline = ctx.redis.pipeline();
  for (const bot of bots) {
    pipeline.hgetall(ctx.keys.botState(bot.id));
    pipeline.exists(ctx.keys.pollerLease(bot.id));
  }
  const replies = (await pipeline.exec()) ?? [];
  const reports: BotHealth[] = [];
  bots.forEach((bot, i) => {
    const [hashError, hash] = replies[2 * i] ?? [];
    const [leaseError, lease] = replies[2 * i + 1] ?? [];
    if (hashError || leaseError) return;
    const report = parseSharedBotState(
      bot,
      (hash ?? {}) as Record<string, string>,
      bot.mode === 'polling' && Number(lease) === 1,
    );
    if (report) reports.push(report);
  });
  return reports;
}
