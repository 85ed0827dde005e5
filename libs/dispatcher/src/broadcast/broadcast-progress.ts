import type { BotConfig } from '@relaygram/config';
import type { RelaygramMetrics } from '@relaygram/observability';
import type { BroadcastStore } from '@relaygram/queue';
import type { Logger } from 'pino';

/**
 * `relaygram_broadcast_pending`, at each scrape: each configured bot's recipients of
 * running broadcasts not settled yet (0 for a bot with none), from Redis, so every
 * dispatcher shows the same numbers. Paused broadcasts are left out: nothing of them
 * is on its way.
 */
export async function refreshPending(
  store: BroadcastStore,
  metrics: RelaygramMetrics,
  bots: readonly BotConfig[],
): Promise<void> {
  const listed = await store.running();
  const records = await Promise.all(listed.map((b) => store.read(b.bot, b.id)));
  const pending = new Map<string, number>(bots.map((bot) => [bot.id, 0]));
  for (const record of records) {
    if (!record || record.status !== 'running') continue;
    const left = Math.max(0, record.total - record.sent - record.blocked - record.failed);
    pending.set(record.bot, (pending.get(record.bot) ?? 0) + left);
  }
  const gauge = metrics.broadcastPending;
  gauge.reset();
  for (const [bot, left] of pending) gauge.labels(bot).set(left);
}

/** The line when a broadcast a process was sending stops running: its status and totals. */
export async function logEnded(
  store: BroadcastStore,
  logger: Logger,
  bot: string,
  id: string,
): Promise<void> {
  const record = await store.read(bot, id).catch(() => undefined);
  const status = record?.status ?? 'gone';
  const { total, sent, blocked, failed } = record ?? {};
  logger.info(
    { bot, broadcast_id: id, status, total, sent, blocked, failed },
    `broadcast ${status}`,
  );
}
