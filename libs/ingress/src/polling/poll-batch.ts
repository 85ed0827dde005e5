import { UpdateSource } from '@relaygram/contracts';
import type { Update } from '@relaygram/routing';
import type { Logger } from 'pino';
import type { IngressBots } from '../bots/ingress-bots';
import type { PollingOptions } from '../ingress.options';
import type { UpdateIntake } from '../intake/update-intake';
import { isUpdateId } from '../intake/update-validation';

/** A getUpdates answer: the updates, with the bytes Telegram sent for each when known. */
export interface Batch {
  updates: unknown[];
  texts: string[] | undefined;
}

export interface BatchDeps {
  bots: IngressBots;
  intake: UpdateIntake;
  options: PollingOptions;
  logger: Logger;
}

/**
 * Enqueues a batch in order; returns the offset that confirms it. Each update goes
 * with its bytes as Telegram sent them (`texts`), as webhook updates do.
 */
export async function enqueueBatch(
  { bots, intake, options, logger }: BatchDeps,
  botId: string,
  { updates, texts }: Batch,
): Promise<number> {
  const bot = bots.get(botId);
  if (!bot) throw new Error('the bot was removed from the config');
  const ids: number[] = [];
  let next: number | undefined;
  const since = intake.writeConnection();
  for (const [index, raw] of updates.entries()) {
    const id = (raw as { update_id?: unknown } | null)?.update_id;
    if (typeof raw !== 'object' || raw === null || !isUpdateId(id)) {
      logger.error(
        { bot: botId },
        'getUpdates returned an update without a valid update_id; skipped',
      );
      continue;
    }
    await intake.accept(
      bot,
      raw as Update,
      Buffer.from(texts?.[index] ?? JSON.stringify(raw)),
      UpdateSource.Polling,
    );
    ids.push(id);
    next = id + 1;
  }
  // Confirmed to Telegram by the next getUpdates: only once replicas hold the batch.
  await intake.replicated(since);
  await options.afterBatchEnqueued?.(botId, ids);
  if (next === undefined) throw new Error('getUpdates returned no update with a valid update_id');
  return next;
}
