import type { QueueContext } from '@relaygram/queue';
import type { BotHealth } from './health-registry';

function flag(value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  return value === '1' || value === 'true';
}

/**
 * Ingress keeps each bot's poller or webhook state in a Redis hash (`bot-state:<bot>`),
 * so processes without ingress (dispatcher, gateway) can report it too. Fields read:
 * `healthy` and `polling` (`1`/`0`), `state` (the poller's state or `webhook`),
 * `problem`, `webhook` (getWebhookInfo as JSON) and `updated_at` (ms).
 */
export function parseSharedBotState(
  id: string,
  mode: BotHealth['mode'],
  hash: Record<string, string>,
): BotHealth | undefined {
  if (!Object.keys(hash).length) return undefined;
  const report: BotHealth = {
    id,
    mode,
    polling: flag(hash.polling) ?? false,
    healthy: flag(hash.healthy) ?? true,
  };
  if (hash.state) report.state = hash.state;
  if (hash.problem) report.problem = hash.problem;
  if (hash.updated_at && Number.isFinite(Number(hash.updated_at)))
    report.updated_at = new Date(Number(hash.updated_at)).toISOString();
  if (hash.webhook) {
    try {
      const info: unknown = JSON.parse(hash.webhook);
      if (info && typeof info === 'object') report.webhook = info as Record<string, unknown>;
    } catch {
      // A malformed entry is skipped: the next watcher write replaces it.
    }
  }
  return report;
}

export async function readSharedBotStates(
  ctx: QueueContext,
  bots: readonly { id: string; mode: BotHealth['mode'] }[],
): Promise<BotHealth[]> {
  if (!bots.length) return [];
  const pipeline = ctx.redis.pipeline();
  for (const bot of bots) pipeline.hgetall(ctx.keys.botState(bot.id));
  const replies = (await pipeline.exec()) ?? [];
  const reports: BotHealth[] = [];
  bots.forEach((bot, i) => {
    const [error, hash] = replies[i] ?? [];
    if (error || !hash) return;
    const report = parseSharedBotState(bot.id, bot.mode, hash as Record<string, string>);
    if (report) reports.push(report);
  });
  return reports;
}
