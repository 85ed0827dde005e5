import type { ChatType, TelegramChat, TelegramMessage } from './emulator.types';

/** Supergroups and channels have ids below -10^12 (`-100` followed by the channel id). */
const SUPERGROUP_ID_CEILING = -1_000_000_000_000;

export function chatTypeOf(chatId: number): ChatType {
  if (chatId > 0) return 'private';
  return chatId <= SUPERGROUP_ID_CEILING ? 'supergroup' : 'group';
}

/**
 * A bot's view of its chats: message ids rise per chat (the user's messages and the bot's
 * share the sequence, as in Telegram), and recent messages are kept for edits, deletes,
 * forwards and callback queries. The oldest are evicted past `limit`, like the Bot API
 * server's own message cache, so long benchmarks do not grow memory.
 */
export class MessageStore {
  private readonly messages = new Map<string, TelegramMessage>();
  private readonly nextIds = new Map<number, number>();
  private readonly chats = new Map<number, TelegramChat>();
  private readonly lastBotMessageIds = new Map<number, number>();
  private readonly usernames = new Map<string, number>();
  private nextChannelId = SUPERGROUP_ID_CEILING - 1_000_000;

  constructor(
    private readonly botUserId: number,
    private readonly limit: number,
  ) {}

  nextMessageId(chatId: number): number {
    const id = this.nextIds.get(chatId) ?? 1;
    this.nextIds.set(chatId, id + 1);
    return id;
  }

  /** Keeps the sequence above an id chosen by a test or carried by an injected update. */
  noteMessageId(chatId: number, messageId: number): void {
    if ((this.nextIds.get(chatId) ?? 1) <= messageId) this.nextIds.set(chatId, messageId + 1);
  }

  rememberChat(chat: TelegramChat): void {
    this.chats.set(chat.id, chat);
    if (chat.username) this.usernames.set(`@${chat.username.toLowerCase()}`, chat.id);
  }

  chat(chatId: number): TelegramChat {
    const known = this.chats.get(chatId);
    if (known) return known;
    const type = chatTypeOf(chatId);
    return type === 'private'
      ? { id: chatId, first_name: `User ${chatId}`, type }
      : { id: chatId, title: `Group ${chatId}`, type };
  }

  /** A chat_id parameter: a number, or `@username` of a public channel. */
  resolveChat(ref: number | string): TelegramChat {
    if (typeof ref === 'number') return this.chat(ref);
    const key = ref.toLowerCase();
    let id = this.usernames.get(key);
    if (id === undefined) {
      id = this.nextChannelId--;
      const username = ref.slice(1);
      this.rememberChat({ id, title: username, username, type: 'channel' });
    }
    return this.chat(id);
  }

  save(message: TelegramMessage): void {
    const chatId = message.chat.id;
    this.messages.set(key(chatId, message.message_id), message);
    this.noteMessageId(chatId, message.message_id);
    if (message.from?.id === this.botUserId) {
      this.lastBotMessageIds.set(chatId, message.message_id);
    }
    if (this.messages.size > this.limit) {
      for (const oldest of this.messages.keys()) {
        this.messages.delete(oldest);
        break;
      }
    }
  }

  get(chatId: number, messageId: number): TelegramMessage | undefined {
    return this.messages.get(key(chatId, messageId));
  }

  delete(chatId: number, messageId: number): boolean {
    return this.messages.delete(key(chatId, messageId));
  }

  lastFromBot(chatId: number): TelegramMessage | undefined {
    const id = this.lastBotMessageIds.get(chatId);
    return id === undefined ? undefined : this.get(chatId, id);
  }

  clear(): void {
    this.messages.clear();
    this.nextIds.clear();
    this.chats.clear();
    this.lastBotMessageIds.clear();
    this.usernames.clear();
  }
}

function key(chatId: number, messageId: number): string {
  return `${chatId}:${messageId}`;
}
