import type { BotState } from './bot-state';
import type { EmulatorLimits } from './emulator.types';
import type { FileStore } from './file-store';
import type { TelegramParams } from './telegram-params';

export interface WebhookSettings {
  retryDelayMs: number;
  maxRetryDelayMs: number;
  timeoutMs: number;
}

/** What every bot shares inside one emulator. */
export interface EmulatorContext {
  readonly files: FileStore;
  readonly limits: EmulatorLimits;
  readonly webhook: WebhookSettings;
  /** Runs a method a webhook target answered with, as Telegram does with webhook replies. */
  runWebhookReply(bot: BotState, method: string, params: TelegramParams): void;
}

export interface MethodCall {
  readonly bot: BotState;
  readonly params: TelegramParams;
  readonly ctx: EmulatorContext;
  /** Aborted when the HTTP client goes away before the answer. */
  readonly signal: AbortSignal | undefined;
}

/** Returns the `result`, or throws a TelegramError; may return a promise (long polling). */
export type MethodHandler = (call: MethodCall) => unknown;

export type MethodTable = Record<string, MethodHandler>;

/** A result Telegram answers with a `description` beside it ("Webhook was set"). */
export class DescribedResult {
  constructor(
    readonly result: unknown,
    readonly description: string,
  ) {}
}
