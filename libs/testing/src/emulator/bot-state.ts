import { CallHistory } from './call-history';
import type { BotIdentity, TelegramUser, Update } from './emulator.types';
import type { FloodControl } from './flood-control';
import { ForcedFailures } from './forced-failures';
import { MessageStore } from './message-store';
import type { TelegramError } from './telegram-error';
import { UpdateQueue } from './update-queue';
import { DEFAULT_ALLOWED_UPDATES, isAllowed, updateType } from './update-types';
import type { WebhookPusher } from './webhook-pusher';

export interface WebhookConfig {
  url: string;
  secretToken: string | undefined;
  maxConnections: number;
}

/** A getUpdates call waiting for updates (long polling). */
export interface PendingPoll {
  readonly offset: number;
  readonly limit: number;
  settle(outcome: Update[] | TelegramError): void;
}

/** Callback query ids kept per bot for answerCallbackQuery checks. */
const CALLBACK_QUERY_MEMORY = 10_000;

export interface BotStateOptions {
  historyLimit: number;
  messageLimit: number;
  firstUpdateId: number;
}

/** Everything the emulator knows about one bot. */
export class BotState {
  readonly user: TelegramUser;
  readonly queue: UpdateQueue;
  readonly messages: MessageStore;
  readonly failures = new ForcedFailures();
  /** Chats (chat_id as text) that blocked the bot: every send to them answers 403. */
  readonly blockedChats = new Set<string>();
  readonly history: CallHistory;
  allowedUpdates: ReadonlySet<string> = DEFAULT_ALLOWED_UPDATES;
  webhook: WebhookConfig | undefined;
  webhookError: { date: number; message: string } | undefined;
  webhookIp: string | undefined;
  pusher: WebhookPusher | undefined;
  poll: PendingPoll | undefined;
  commands: unknown[] = [];
  /** Flood limits in force; none when undefined. */
  flood: FloodControl | undefined;
  private pollWakeScheduled = false;
  private readonly callbackQueryIds = new Set<string>();

  constructor(
    readonly identity: BotIdentity,
    options: BotStateOptions,
  ) {
    this.user = {
      id: identity.id,
      is_bot: true,
      first_name: identity.firstName,
      username: identity.username,
    };
    this.queue = new UpdateQueue(options.firstUpdateId);
    this.messages = new MessageStore(identity.id, options.messageLimit);
    this.history = new CallHistory(options.historyLimit);
  }

  get id(): number {
    return this.identity.id;
  }

  /**
   * Queues an update like Telegram does when one happens: types the bot did not ask for are
   * dropped at once (allowed_updates never filters what is already queued).
   */
  enqueue(update: Update, explicitId?: number): Update {
    const type = updateType(update);
    if (type === undefined) throw new TypeError('an update needs a type field besides update_id');
    if (!isAllowed(type, this.allowedUpdates)) return this.queue.skip(update, explicitId);
    this.queue.push(update, explicitId);
    if (this.pusher) this.pusher.enqueue(update);
    else this.wakePoll();
    return update;
  }

  rememberCallbackQuery(id: string): void {
    this.callbackQueryIds.add(id);
    if (this.callbackQueryIds.size > CALLBACK_QUERY_MEMORY) {
      for (const oldest of this.callbackQueryIds) {
        this.callbackQueryIds.delete(oldest);
        break;
      }
    }
  }

  knowsCallbackQuery(id: string): boolean {
    return this.callbackQueryIds.has(id);
  }

  /** Ends a waiting getUpdates, if any, with an error or an empty answer. */
  endPoll(outcome: Update[] | TelegramError): void {
    this.poll?.settle(outcome);
  }

  /**
   * Updates injected in one go reach a waiting poll together: the answer is sent on the next
   * turn of the event loop rather than on the first update.
   */
  private wakePoll(): void {
    if (!this.poll || this.pollWakeScheduled) return;
    this.pollWakeScheduled = true;
    setImmediate(() => {
      this.pollWakeScheduled = false;
      const poll = this.poll;
      if (!poll) return;
      const { updates } = this.queue.take(poll.offset, poll.limit);
      if (updates.length > 0) poll.settle(updates);
    });
  }
}
