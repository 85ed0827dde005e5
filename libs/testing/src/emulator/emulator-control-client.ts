import { request } from 'undici';
import type {
  AddBotOptions,
  BotIdentity,
  BotRef,
  CallbackUpdateOptions,
  CallQuery,
  FailSpec,
  FailureTimes,
  FloodLimits,
  FloodStats,
  MessageUpdateOptions,
  RecordedCall,
  TelegramMessage,
  Update,
  WaitForCallsOptions,
  WebhookInfo,
} from './emulator.types';
import {
  blockedByUserFailure,
  serverErrorFailure,
  tooManyRequestsFailure,
  unauthorizedFailure,
} from './forced-failures';

export class EmulatorControlError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'EmulatorControlError';
  }
}

/**
 * The emulator's control API from another process (emulator.main): the same methods as
 * TelegramEmulator, asynchronous. `controlUrl` is what emulator.main prints (the API root
 * followed by /_emulator).
 */
export class EmulatorControlClient {
  private readonly base: string;

  constructor(controlUrl: string) {
    this.base = controlUrl.replace(/\/+$/, '');
  }

  addBot(options: AddBotOptions = {}): Promise<BotIdentity> {
    return this.call('POST', '/bots', options);
  }

  bots(): Promise<BotIdentity[]> {
    return this.call('GET', '/bots');
  }

  bot(bot: BotRef): Promise<BotIdentity> {
    return this.call('GET', botPath(bot));
  }

  injectUpdate(bot: BotRef, payload: unknown): Promise<Update> {
    return this.call('POST', `${botPath(bot)}/updates`, payload);
  }

  message(bot: BotRef, options: MessageUpdateOptions): Promise<Update> {
    return this.call('POST', `${botPath(bot)}/updates/message`, options);
  }

  callback(bot: BotRef, options: CallbackUpdateOptions): Promise<Update> {
    return this.call('POST', `${botPath(bot)}/updates/callback`, options);
  }

  async setNextUpdateId(bot: BotRef, updateId: number): Promise<void> {
    await this.call('PUT', `${botPath(bot)}/next-update-id`, { updateId });
  }

  pendingUpdates(bot: BotRef): Promise<Update[]> {
    return this.call('GET', `${botPath(bot)}/updates`);
  }

  webhookInfo(bot: BotRef): Promise<WebhookInfo> {
    return this.call('GET', `${botPath(bot)}/webhook`);
  }

  async storedMessage(
    bot: BotRef,
    chatId: number,
    messageId: number,
  ): Promise<TelegramMessage | undefined> {
    try {
      return await this.call('GET', `${botPath(bot)}/chats/${chatId}/messages/${messageId}`);
    } catch (error) {
      if (error instanceof EmulatorControlError && error.status === 404) return undefined;
      throw error;
    }
  }

  sent(bot: BotRef, query: CallQuery = {}): Promise<RecordedCall[]> {
    return this.call('GET', `${botPath(bot)}/sent${queryString(query)}`);
  }

  calls(bot?: BotRef, query: CallQuery = {}): Promise<RecordedCall[]> {
    const path = bot === undefined ? '/calls' : `${botPath(bot)}/calls`;
    return this.call('GET', path + queryString(query));
  }

  waitForCalls(bot: BotRef, options: WaitForCallsOptions = {}): Promise<RecordedCall[]> {
    return this.call('GET', `${botPath(bot)}/calls/wait${queryString(options)}`);
  }

  async fail(bot: BotRef, spec: FailSpec): Promise<void> {
    await this.call('POST', `${botPath(bot)}/fail`, spec);
  }

  failBlockedByUser(bot: BotRef, method?: string, times?: FailureTimes): Promise<void> {
    return this.fail(bot, blockedByUserFailure(method, times));
  }

  failTooManyRequests(
    bot: BotRef,
    retryAfter: number,
    method?: string,
    times?: FailureTimes,
  ): Promise<void> {
    return this.fail(bot, tooManyRequestsFailure(retryAfter, method, times));
  }

  failServerError(bot: BotRef, code: number, method?: string, times?: FailureTimes): Promise<void> {
    return this.fail(bot, serverErrorFailure(code, method, times));
  }

  failUnauthorized(bot: BotRef, times?: FailureTimes): Promise<void> {
    return this.fail(bot, unauthorizedFailure(times));
  }

  /** Enforces flood limits on a bot from now on; null lifts them. */
  async setFloodLimits(bot: BotRef, limits: FloodLimits | null): Promise<void> {
    if (limits === null) await this.call('DELETE', `${botPath(bot)}/flood-limits`);
    else await this.call('PUT', `${botPath(bot)}/flood-limits`, limits);
  }

  async floodStats(bot: BotRef): Promise<FloodStats | undefined> {
    try {
      return await this.call('GET', `${botPath(bot)}/flood`);
    } catch (error) {
      if (error instanceof EmulatorControlError && error.status === 404) return undefined;
      throw error;
    }
  }

  async clearFailures(bot: BotRef): Promise<void> {
    await this.call('DELETE', `${botPath(bot)}/fail`);
  }

  async reset(): Promise<void> {
    await this.call('POST', '/reset');
  }

  private async call<T>(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    path: string,
    body?: unknown,
  ): Promise<T> {
    const response = await request(this.base + path, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.body.text();
    const value: unknown = text === '' ? undefined : JSON.parse(text);
    if (response.statusCode >= 400) {
      const error = (value as { error?: unknown } | undefined)?.error;
      throw new EmulatorControlError(
        response.statusCode,
        typeof error === 'string' ? error : `HTTP ${response.statusCode} from ${method} ${path}`,
      );
    }
    return value as T;
  }
}

function botPath(bot: BotRef): string {
  return `/bots/${encodeURIComponent(String(bot))}`;
}

function queryString(query: object): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) params.set(key, String(value));
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}
