import { setTimeout as sleep } from 'node:timers/promises';
import { botInfoMethods } from './bot-info-methods';
import type { BotState } from './bot-state';
import type { CallHistory } from './call-history';
import type { RecordedCall } from './emulator.types';
import { updateMethods } from './get-updates';
import { mediaMethods } from './media-methods';
import {
  DescribedResult,
  type EmulatorContext,
  type MethodHandler,
  type MethodTable,
} from './method-call';
import { sendMethods } from './send-methods';
import {
  blockedByUser,
  internalError,
  notFound,
  TelegramError,
  tooManyRequests,
  unauthorized,
} from './telegram-error';
import { normalizeParams, summarizeParams } from './telegram-params';
import { webhookMethods } from './webhook-methods';

interface MethodEntry {
  name: string;
  handler: MethodHandler;
}

/** Method names are case-insensitive in the Bot API: the table is keyed in lower case. */
function buildMethodIndex(...tables: MethodTable[]): Map<string, MethodEntry> {
  const index = new Map<string, MethodEntry>();
  for (const table of tables) {
    for (const [name, handler] of Object.entries(table)) {
      index.set(name.toLowerCase(), { name, handler });
    }
  }
  return index;
}

const METHODS = buildMethodIndex(
  botInfoMethods,
  updateMethods,
  webhookMethods,
  sendMethods,
  mediaMethods,
);

/** Methods that read or manage the bot rather than send something on its behalf. */
export function isSendingMethod(method: string): boolean {
  const lower = method.toLowerCase();
  return !(
    lower.startsWith('get') ||
    lower === 'setwebhook' ||
    lower === 'deletewebhook' ||
    lower === 'logout' ||
    lower === 'close'
  );
}

export interface CallRequest {
  /** undefined when the token is unknown. */
  bot: BotState | undefined;
  method: string;
  rawParams: Record<string, unknown>;
  via: RecordedCall['via'];
  signal?: AbortSignal;
  /** A failure decided before the method runs, such as an oversized upload. */
  rejectWith?: TelegramError;
}

export type CallOutcome =
  { drop: false; status: number; body: Record<string, unknown> } | { drop: true };

/**
 * Runs one Bot API call whatever brought it (HTTP or a webhook reply): records it, applies the
 * failures a test forced, runs the method and shapes Telegram's answer.
 */
export class MethodDispatcher {
  private seq = 0;

  constructor(
    private readonly ctx: EmulatorContext,
    private readonly history: CallHistory,
  ) {}

  async execute(request: CallRequest): Promise<CallOutcome> {
    const { bot } = request;
    const lower = request.method.toLowerCase();
    const entry = METHODS.get(lower);
    const { params, hasUploads } = normalizeParams(request.rawParams);
    const call: RecordedCall = {
      seq: ++this.seq,
      bot: bot ? bot.id : null,
      method: entry ? entry.name : request.method,
      params: summarizeParams(params, hasUploads),
      time: Date.now(),
      via: request.via,
    };
    this.history.push(call);
    bot?.history.push(call);

    let outcome: CallOutcome;
    try {
      if (!bot) throw unauthorized();
      if (!entry) throw notFound();
      if (request.rejectWith) throw request.rejectWith;
      const forced = bot.failures.size > 0 ? bot.failures.take(lower) : undefined;
      if (forced?.kind === 'error') throw forced.error;
      if (bot.blockedChats.size > 0 && isSendingMethod(lower)) {
        if (bot.blockedChats.has(String(params['chat_id']))) throw blockedByUser();
      }
      const retryAfter = bot.flood?.check(lower, params, call.time);
      if (retryAfter !== undefined) throw tooManyRequests(retryAfter);
      if (forced?.kind === 'drop') {
        outcome = { drop: true };
      } else {
        if (forced?.kind === 'delay') await sleep(forced.delayMs);
        let result = entry.handler({ bot, params, ctx: this.ctx, signal: request.signal });
        if (result instanceof Promise) result = (await result) as unknown;
        outcome = success(call, result);
      }
    } catch (error) {
      outcome = failure(call, error);
    }
    if (outcome.drop) call.status = 0;
    this.history.answered(call);
    bot?.history.answered(call);
    return outcome;
  }
}

function success(call: RecordedCall, value: unknown): CallOutcome {
  call.status = 200;
  if (value instanceof DescribedResult) {
    call.result = value.result;
    return {
      drop: false,
      status: 200,
      body: { ok: true, result: value.result, description: value.description },
    };
  }
  call.result = value;
  return { drop: false, status: 200, body: { ok: true, result: value } };
}

function failure(call: RecordedCall, error: unknown): CallOutcome {
  let telegramError: TelegramError;
  if (error instanceof TelegramError) {
    telegramError = error;
  } else {
    // A bug in the emulator, not a scripted failure: make it visible without logging per call.
    process.emitWarning(error instanceof Error ? error : new Error(String(error)));
    telegramError = internalError();
  }
  const body = telegramError.toBody();
  call.status = telegramError.code;
  call.error = body;
  return { drop: false, status: telegramError.code, body: { ...body } };
}
