import type { BotState, PendingPoll } from './bot-state';
import type { Update } from './emulator.types';
import type { MethodCall, MethodTable } from './method-call';
import {
  conflict,
  TelegramError,
  TERMINATED_BY_GET_UPDATES,
  WEBHOOK_ACTIVE,
} from './telegram-error';
import { intParam } from './telegram-params';
import { parseAllowedUpdates } from './update-types';

/** The Bot API server's ceiling on a long poll, in seconds. */
const MAX_TIMEOUT_S = 50;

function getUpdates({ bot, params, signal }: MethodCall): Update[] | Promise<Update[]> {
  if (bot.webhook) throw conflict(WEBHOOK_ACTIVE);
  const offset = intParam(params, 'offset') ?? 0;
  const limit = clamp(intParam(params, 'limit') ?? 100, 1, 100);
  const timeout = clamp(intParam(params, 'timeout') ?? 0, 0, MAX_TIMEOUT_S);

  const allowed = parseAllowedUpdates(params['allowed_updates']);
  if (allowed) bot.allowedUpdates = allowed;

  const taken = bot.queue.take(offset, limit);
  if (timeout === 0 || taken.updates.length > 0) return taken.updates;

  // Like the Bot API server, a new poll only displaces the waiting one when it waits too.
  bot.endPoll(conflict(TERMINATED_BY_GET_UPDATES));
  return waitForUpdates(bot, taken.offset, limit, timeout * 1000, signal);
}

function waitForUpdates(
  bot: BotState,
  offset: number,
  limit: number,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<Update[]> {
  return new Promise<Update[]>((resolve, reject) => {
    let settled = false;
    const onAbort = (): void => poll.settle([]);
    const poll: PendingPoll = {
      offset,
      limit,
      settle(outcome) {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (bot.poll === poll) bot.poll = undefined;
        if (outcome instanceof TelegramError) reject(outcome);
        else resolve(outcome);
      },
    };
    const timer = setTimeout(() => poll.settle(bot.queue.take(offset, limit).updates), timeoutMs);
    bot.poll = poll;
    if (signal?.aborted) poll.settle([]);
    else signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

export const updateMethods: MethodTable = { getUpdates };
