import type { OutboxStatus } from '@relaygram/contracts';
import type { OutboxRecord } from './outbox-store';

/**
 * `GET /api/v1/:botId/outbox/:id`: an outbox send as its client reads it, and what
 * `relaygram outbox show --json` prints.
 */
export interface OutboxSendView {
  id: string;
  status: OutboxStatus;
  method: string;
  chat_id: number | string;
  attempts: number;
  created_at: string;
  updated_at: string;
  /** Telegram's `result` of a sent call. */
  result?: unknown;
  /** A failed send: Telegram's error, or why it was never made. */
  error?: { error_code?: number; description: string };
  /** A queued send that was tried: why the last attempt did not go through, and the next. */
  last_error?: string;
  next_attempt_at?: string;
  /** The group became a supergroup and the send went there. */
  migrated_to_chat_id?: number | string;
}

export function outboxSendView(record: OutboxRecord): OutboxSendView {
  const view: OutboxSendView = {
    id: record.id,
    status: record.status,
    method: record.method,
    chat_id: chatOf(record.chat),
    attempts: record.attempts,
    created_at: isoTime(record.createdAt),
    updated_at: isoTime(record.updatedAt),
  };
  if (record.result !== undefined) view.result = parsedResult(record.result);
  if (record.status === 'failed' && record.description !== undefined) {
    view.error = {
      ...(record.errorCode !== undefined ? { error_code: record.errorCode } : {}),
      description: record.description,
    };
  }
  if (record.status === 'queued') {
    if (record.lastError !== undefined) view.last_error = record.lastError;
    if (record.nextAttemptAt !== undefined) view.next_attempt_at = isoTime(record.nextAttemptAt);
  }
  if (record.migratedTo !== undefined) view.migrated_to_chat_id = chatOf(record.migratedTo);
  return view;
}

/** Chats are kept as text; an id goes back as the integer Telegram uses. */
function chatOf(chat: string): number | string {
  const number = Number(chat);
  return /^-?\d+$/.test(chat) && Number.isSafeInteger(number) ? number : chat;
}

function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

/** The dispatcher keeps Telegram's result as JSON text; text that is not JSON stays text. */
function parsedResult(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
