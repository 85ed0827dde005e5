/** A JSON object as Telegram sends and receives it. */
export type JsonObject = { [key: string]: unknown };

/** An Update: `update_id` plus exactly one field named after its type. */
export interface Update {
  update_id: number;
  [type: string]: unknown;
}

export interface TelegramUser {
  id: number;
  is_bot: boolean;
  first_name: string;
  last_name?: string;
  username?: string;
  language_code?: string;
}

export type ChatType = 'private' | 'group' | 'supergroup' | 'channel';

export interface TelegramChat {
  id: number;
  type: ChatType;
  title?: string;
  username?: string;
  first_name?: string;
  last_name?: string;
}

export interface MessageEntity {
  type: string;
  offset: number;
  length: number;
  [key: string]: unknown;
}

export interface PhotoSize {
  file_id: string;
  file_unique_id: string;
  width: number;
  height: number;
  file_size?: number;
}

export interface TelegramDocument {
  file_id: string;
  file_unique_id: string;
  file_name?: string;
  mime_type?: string;
  file_size?: number;
}

export interface TelegramMessage {
  message_id: number;
  from?: TelegramUser;
  sender_chat?: TelegramChat;
  chat: TelegramChat;
  date: number;
  edit_date?: number;
  text?: string;
  entities?: MessageEntity[];
  caption?: string;
  caption_entities?: MessageEntity[];
  photo?: PhotoSize[];
  document?: TelegramDocument;
  reply_markup?: JsonObject;
  reply_to_message?: TelegramMessage;
  forward_origin?: JsonObject;
  [key: string]: unknown;
}

/** A bot as a test refers to it: its token, its numeric id or its username. */
export type BotRef = string | number;

export interface AddBotOptions {
  /** `<digits>:<secret>`; generated like a real one when absent. */
  token?: string;
  username?: string;
  firstName?: string;
  /** Telegram's flood limits for this bot; none when absent (see FloodLimits). */
  floodLimits?: FloodLimits;
}

/**
 * Flood limits the emulator enforces on a bot's sending calls (send* but
 * sendChatAction, copy*, forward*, editMessage*), each optional, on its own clock:
 * - `perSecond`: the bot as a whole, a bucket of that many sends refilled at that rate;
 * - `perChatPerSecond` and `chatBurst` (default 1): one chat, a bucket of `chatBurst`
 *   refilled at `perChatPerSecond`;
 * - `perGroupPerMinute`: one group or channel (chat ids below 0, `@username`), at most
 *   that many sends in any 60 s.
 * A call over a limit is answered like Telegram: 429 `Too Many Requests: retry after N`
 * with `parameters.retry_after`, and counts against none.
 */
export interface FloodLimits {
  perSecond?: number;
  perChatPerSecond?: number;
  chatBurst?: number;
  perGroupPerMinute?: number;
}

export interface FloodStats {
  limits: FloodLimits;
  /** Sending calls let through. */
  accepted: number;
  /** Sending calls answered 429 for a flood limit, and which limit each hit first. */
  limited: number;
  limitedBy: { bot: number; chat: number; group: number };
}

export interface BotIdentity {
  token: string;
  id: number;
  username: string;
  firstName: string;
}

export interface TelegramEmulatorOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  host?: string;
  /** First delay before a failed webhook delivery is retried; doubles per failure. */
  webhookRetryDelayMs?: number;
  /** Ceiling of the doubling retry delay. */
  webhookMaxRetryDelayMs?: number;
  /** How long a webhook target may take to answer before the attempt fails. */
  webhookTimeoutMs?: number;
  /** Calls kept per bot (and overall) for `calls()` and `sent()`. */
  historyLimit?: number;
  /** Messages kept per bot for edits, deletes, forwards and callback queries. */
  messageLimit?: number;
  /** Upload and download limits in bytes; Telegram's public server values by default. */
  limits?: Partial<EmulatorLimits>;
}

export interface EmulatorLimits {
  photoBytes: number;
  documentBytes: number;
  downloadBytes: number;
}

export interface MessageUpdateOptions {
  chatId: number;
  userId?: number;
  text: string;
  entities?: MessageEntity[];
  chatType?: ChatType;
  messageId?: number;
  firstName?: string;
  username?: string;
  replyMarkup?: JsonObject;
}

export interface CallbackUpdateOptions {
  chatId: number;
  userId: number;
  data: string;
  /** The message the button belongs to; the bot's last message in the chat when absent. */
  messageId?: number;
  firstName?: string;
  username?: string;
}

/** An uploaded file as calls record it: the bytes themselves are not kept in the record. */
export interface UploadSummary {
  filename: string;
  size: number;
  sha256: string;
  mimeType: string;
}

export interface TelegramErrorBody {
  ok: false;
  error_code: number;
  description: string;
  parameters?: { retry_after?: number; migrate_to_chat_id?: number };
}

export interface RecordedCall {
  /** Position among every call the emulator received, across bots. */
  seq: number;
  /** The bot's numeric id; null when the token was unknown. */
  bot: number | null;
  /** Canonical Bot API name (`sendMessage`) whatever case the caller used. */
  method: string;
  /**
   * Parameters as Telegram understood them, whatever the encoding: numbers, booleans and
   * JSON-serialized fields (reply_markup, allowed_updates...) decoded; uploads summarised.
   */
  params: JsonObject;
  /** Date.now() when the call arrived. */
  time: number;
  /** `webhook-reply` when the method came back as the body of a webhook answer. */
  via: 'http' | 'webhook-reply';
  /** HTTP status answered; 0 when the connection was dropped; absent while in flight. */
  status?: number;
  result?: unknown;
  error?: TelegramErrorBody;
}

export interface CallQuery {
  method?: string;
}

export interface WaitForCallsOptions extends CallQuery {
  /** Answered calls to wait for; 1 by default. */
  count?: number;
  timeoutMs?: number;
}

/** How often a forced failure applies: a number of calls, or every call until cleared. */
export type FailureTimes = number | 'always';

export interface FailureError {
  code: number;
  description: string;
  retryAfter?: number;
  migrateToChatId?: number;
}

interface FailureScope {
  /** Only calls of this method (any case); every method when absent. */
  method?: string;
  /** 1 by default. */
  times?: FailureTimes;
}

export type FailSpec =
  | (FailureScope & { error: FailureError })
  | (FailureScope & { delayMs: number })
  | (FailureScope & { drop: true });

export interface WebhookInfo {
  url: string;
  has_custom_certificate: boolean;
  pending_update_count: number;
  ip_address?: string;
  last_error_date?: number;
  last_error_message?: string;
  max_connections?: number;
  allowed_updates?: string[];
}
