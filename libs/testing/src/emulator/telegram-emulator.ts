import { randomInt } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { registerBotApiRoutes } from './bot-api.routes';
import { BotRegistry } from './bot-registry';
import type { BotState } from './bot-state';
import { CallHistory } from './call-history';
import { registerControlRoutes } from './control-api.routes';
import { CONTROL_PREFIX, createEmulatorServer } from './emulator-server';
import type {
  AddBotOptions,
  BotIdentity,
  BotRef,
  CallbackUpdateOptions,
  CallQuery,
  EmulatorLimits,
  FailSpec,
  FloodLimits,
  FloodStats,
  FailureTimes,
  MessageUpdateOptions,
  RecordedCall,
  TelegramEmulatorOptions,
  TelegramMessage,
  Update,
  WaitForCallsOptions,
  WebhookInfo,
} from './emulator.types';
import { FileStore } from './file-store';
import { FloodControl } from './flood-control';
import {
  blockedByUserFailure,
  serverErrorFailure,
  tooManyRequestsFailure,
  unauthorizedFailure,
} from './forced-failures';
import type { EmulatorContext, WebhookSettings } from './method-call';
import { isSendingMethod, MethodDispatcher } from './method-dispatcher';
import {
  buildCallbackUpdate,
  buildMessageUpdate,
  prepareInjectedUpdate,
  type PreparedUpdate,
} from './update-builders';
import { stopWebhook, webhookInfo } from './webhook-methods';

const MB = 1024 * 1024;

/** Telegram's public server: 10 MB photos, 50 MB other uploads, 20 MB downloads. */
export const TELEGRAM_LIMITS: Readonly<EmulatorLimits> = Object.freeze({
  photoBytes: 10 * MB,
  documentBytes: 50 * MB,
  downloadBytes: 20 * MB,
});

const DEFAULT_WAIT_MS = 5_000;

interface EmulatorSettings {
  historyLimit: number;
  messageLimit: number;
  webhook: WebhookSettings;
}

/**
 * An in-process Telegram Bot API server for tests, benchmarks and the demo. Frameworks call
 * `${apiRoot}/bot<token>/<method>`; tests drive it through these methods or, from another
 * process, through the same features under `${apiRoot}/_emulator` (EmulatorControlClient).
 */
export class TelegramEmulator {
  private readonly registry: BotRegistry;
  private readonly files = new FileStore();
  private readonly history: CallHistory;
  private address: AddressInfo | undefined;
  private stopping: Promise<void> | undefined;

  private constructor(
    private readonly app: FastifyInstance,
    settings: EmulatorSettings,
    limits: EmulatorLimits,
  ) {
    this.history = new CallHistory(settings.historyLimit);
    this.registry = new BotRegistry(() => ({
      historyLimit: settings.historyLimit,
      messageLimit: settings.messageLimit,
      firstUpdateId: randomInt(100_000_000, 900_000_000),
    }));
    const ctx: EmulatorContext = {
      files: this.files,
      limits,
      webhook: settings.webhook,
      runWebhookReply: (bot, method, params) => {
        void dispatcher.execute({ bot, method, rawParams: params, via: 'webhook-reply' });
      },
    };
    const dispatcher = new MethodDispatcher(ctx, this.history);
    registerBotApiRoutes(app, { registry: this.registry, dispatcher, files: this.files, limits });
    registerControlRoutes(app, this);
  }

  static async start(options: TelegramEmulatorOptions = {}): Promise<TelegramEmulator> {
    const settings: EmulatorSettings = {
      historyLimit: positive(options.historyLimit ?? 10_000, 'historyLimit'),
      messageLimit: positive(options.messageLimit ?? 10_000, 'messageLimit'),
      webhook: {
        retryDelayMs: options.webhookRetryDelayMs ?? 1_000,
        maxRetryDelayMs: options.webhookMaxRetryDelayMs ?? 60_000,
        timeoutMs: options.webhookTimeoutMs ?? 60_000,
      },
    };
    const app = await createEmulatorServer();
    const emulator = new TelegramEmulator(app, settings, { ...TELEGRAM_LIMITS, ...options.limits });
    try {
      await app.listen({ port: options.port ?? 0, host: options.host ?? '127.0.0.1' });
    } catch (error) {
      await app.close();
      throw error;
    }
    emulator.address = app.server.address() as AddressInfo;
    return emulator;
  }

  /** `http://host:port`: frameworks call `${apiRoot}/bot<token>/<method>`. */
  get apiRoot(): string {
    if (!this.address) throw new Error('the emulator is not listening');
    return `http://${urlHost(this.address.address)}:${this.address.port}`;
  }

  /** Root of the HTTP control API, for EmulatorControlClient. */
  get controlUrl(): string {
    return `${this.apiRoot}${CONTROL_PREFIX}`;
  }

  get port(): number {
    if (!this.address) throw new Error('the emulator is not listening');
    return this.address.port;
  }

  /** Adds a bot (a realistic token is generated when none is given). */
  addBot(options: AddBotOptions = {}): BotIdentity {
    const bot = this.registry.add(options);
    if (options.floodLimits) bot.flood = new FloodControl(options.floodLimits);
    return { ...bot.identity };
  }

  /** Enforces Telegram's flood limits on a bot from now on (null lifts them); counts restart. */
  setFloodLimits(ref: BotRef, limits: FloodLimits | null): void {
    this.resolve(ref).flood = limits ? new FloodControl(limits) : undefined;
  }

  /** What the flood limits let through and refused; undefined when none are set. */
  floodStats(ref: BotRef): FloodStats | undefined {
    return this.resolve(ref).flood?.stats();
  }

  bots(): BotIdentity[] {
    return this.registry.all().map((bot) => ({ ...bot.identity }));
  }

  bot(ref: BotRef): BotIdentity {
    return { ...this.resolve(ref).identity };
  }

  /** Queues `{ <type>: {...} }` (with an optional explicit update_id) and returns the Update. */
  injectUpdate(ref: BotRef, payload: unknown): Update {
    const bot = this.resolve(ref);
    return enqueue(bot, prepareInjectedUpdate(bot, payload));
  }

  /** A user's text message; `/commands` get their bot_command entity. */
  message(ref: BotRef, options: MessageUpdateOptions): Update {
    const bot = this.resolve(ref);
    return enqueue(bot, buildMessageUpdate(bot, options));
  }

  /** A press on an inline keyboard button. */
  callback(ref: BotRef, options: CallbackUpdateOptions): Update {
    const bot = this.resolve(ref);
    return enqueue(bot, buildCallbackUpdate(bot, options));
  }

  /** The id of the next update, e.g. to play Telegram restarting ids after a quiet week. */
  setNextUpdateId(ref: BotRef, updateId: number): void {
    this.resolve(ref).queue.setNextId(updateId);
  }

  /** Updates not yet confirmed by getUpdates or a webhook. */
  pendingUpdates(ref: BotRef): Update[] {
    return [...this.resolve(ref).queue.values()];
  }

  webhookInfo(ref: BotRef): WebhookInfo {
    return webhookInfo(this.resolve(ref));
  }

  /** A message as the emulator holds it now (edits applied); undefined once deleted. */
  storedMessage(ref: BotRef, chatId: number, messageId: number): TelegramMessage | undefined {
    return this.resolve(ref).messages.get(chatId, messageId);
  }

  /** What the bot sent: every call but getters and webhook management. */
  sent(ref: BotRef, query: CallQuery = {}): RecordedCall[] {
    const method = query.method?.toLowerCase();
    return this.resolve(ref).history.toArray(
      (call) => isSendingMethod(call.method) && (!method || call.method.toLowerCase() === method),
    );
  }

  /** Every call (getUpdates, setWebhook... included), of one bot or of all. */
  calls(ref?: BotRef, query: CallQuery = {}): RecordedCall[] {
    const method = query.method?.toLowerCase();
    const filter = method
      ? (call: RecordedCall) => call.method.toLowerCase() === method
      : undefined;
    return ref === undefined
      ? this.history.toArray(filter)
      : this.resolve(ref).history.toArray(filter);
  }

  /** `listener` sees each call of the bot once answered, until the returned function is called. */
  watchCalls(ref: BotRef, listener: (call: RecordedCall) => void): () => void {
    return this.resolve(ref).history.watch(listener);
  }

  /** Resolves once `count` (default 1) matching calls have been answered. */
  waitForCalls(ref: BotRef, options: WaitForCallsOptions = {}): Promise<RecordedCall[]> {
    const method = options.method?.toLowerCase();
    return this.resolve(ref).history.waitFor(
      (call) => !method || call.method.toLowerCase() === method,
      options.count ?? 1,
      options.timeoutMs ?? DEFAULT_WAIT_MS,
    );
  }

  fail(ref: BotRef, spec: FailSpec): void {
    this.resolve(ref).failures.add(spec);
  }

  /** 403 `Forbidden: bot was blocked by the user`. */
  failBlockedByUser(ref: BotRef, method?: string, times?: FailureTimes): void {
    this.fail(ref, blockedByUserFailure(method, times));
  }

  /** 429 `Too Many Requests: retry after N` with parameters.retry_after. */
  failTooManyRequests(
    ref: BotRef,
    retryAfter: number,
    method?: string,
    times?: FailureTimes,
  ): void {
    this.fail(ref, tooManyRequestsFailure(retryAfter, method, times));
  }

  /**
   * The users of these chats blocked the bot: from now on every send to them answers 403
   * `Forbidden: bot was blocked by the user`, until `unblockChats`.
   */
  blockChats(ref: BotRef, chatIds: Iterable<number | string>): void {
    const blocked = this.resolve(ref).blockedChats;
    for (const chatId of chatIds) blocked.add(String(chatId));
  }

  /** Lifts `blockChats` for these chats, or for every chat of the bot. */
  unblockChats(ref: BotRef, chatIds?: Iterable<number | string>): void {
    const blocked = this.resolve(ref).blockedChats;
    if (!chatIds) return blocked.clear();
    for (const chatId of chatIds) blocked.delete(String(chatId));
  }

  failServerError(ref: BotRef, code: number, method?: string, times?: FailureTimes): void {
    this.fail(ref, serverErrorFailure(code, method, times));
  }

  /** 401 `Unauthorized` on every method, like a revoked token. */
  failUnauthorized(ref: BotRef, times?: FailureTimes): void {
    this.fail(ref, unauthorizedFailure(times));
  }

  clearFailures(ref: BotRef): void {
    this.resolve(ref).failures.clear();
  }

  /** Forgets every bot, call and file, as if freshly started (the port is kept). */
  async reset(): Promise<void> {
    const reason = 'the emulator was reset';
    for (const bot of this.registry.all()) retire(bot, reason);
    this.registry.clear();
    this.history.clear();
    this.history.abortWaiters(reason);
    await this.files.clear();
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      const reason = 'the emulator stopped';
      for (const bot of this.registry.all()) retire(bot, reason);
      this.history.abortWaiters(reason);
      await this.app.close();
      await this.files.clear();
    })();
    return this.stopping;
  }

  private resolve(ref: BotRef): BotState {
    return this.registry.resolve(ref);
  }
}

/** Stops a bot's pushes, answers its waiting poll with nothing and fails its waiters. */
function retire(bot: BotState, reason: string): void {
  stopWebhook(bot);
  bot.endPoll([]);
  bot.history.abortWaiters(reason);
}

function enqueue(bot: BotState, prepared: PreparedUpdate): Update {
  return bot.enqueue(prepared.update, prepared.explicitId);
}

function urlHost(address: string): string {
  if (address === '0.0.0.0') return '127.0.0.1';
  if (address === '::') return '[::1]';
  return address.includes(':') ? `[${address}]` : address;
}

function positive(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1)
    throw new RangeError(`${name} must be a positive integer`);
  return value;
}
