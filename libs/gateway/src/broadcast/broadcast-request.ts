import { createHash } from 'node:crypto';
import { BROADCAST_MAX_RECIPIENTS, type BroadcastCall } from '@relaygram/contracts';
import { isPacedMethod } from '@relaygram/pacing';
import { checkMethod } from '../access/access-check';
import type { GatewayClient } from '../access/client-directory';
import { hasRedirectingMethod } from '../access/method-rules';
import type { HttpAnswer } from '../http/http-answer';
import { laneChat } from '../outbox/outbox-request';
import { isPlainObject } from '../rest/dto/field.decorators';
import { restDenial } from '../rest/rest-answers';

/** The streamed list of a broadcast body; its other fields, each at most MAX_FIELD_BYTES. */
export const RECIPIENTS_FIELD = 'chat_ids';
export const CALL_FIELDS = ['method', 'params'] as const;
export const MAX_FIELD_BYTES = 64 * 1024;

export type Checked<T> = { ok: true; value: T } | { ok: false; answer: HttpAnswer };

const MAX = BROADCAST_MAX_RECIPIENTS;
const METHOD_REQUIRED = 'method is required: the Bot API method to call, e.g. "sendMessage"';
const PARAMS_RULE =
  "params must be a JSON object of the method's Bot API parameters, without chat_id " +
  '(file_id or URL for media)';

/**
 * The calls a broadcast may make: those that send one message to the chat (the send*
 * methods but sendChatAction, copyMessage, forwardMessage). Edits name a message of
 * each chat, and the batch copies and forwards cost up to 100 sends each.
 */
export function isBroadcastMethod(method: string): boolean {
  const lower = method.toLowerCase();
  return (
    isPacedMethod(lower) &&
    !lower.startsWith('edit') &&
    lower !== 'copymessages' &&
    lower !== 'forwardmessages'
  );
}

/** `method`'s JSON text: a method name the client may call, reserved ones refused, that sends. */
export function checkBroadcastMethod(
  client: GatewayClient,
  text: string,
  offset: number,
): Checked<string> {
  const parsed = parseJson(text, 'method', offset);
  if (!parsed.ok) return parsed;
  const method = parsed.value;
  if (typeof method !== 'string') {
    return refused(`method must be a string: the Bot API method to call, e.g. "sendMessage"`);
  }
  const denial = checkMethod(client, method);
  if (denial) return { ok: false, answer: restDenial(denial) };
  if (!isBroadcastMethod(method)) {
    return refused(
      `${method} does not send a message to a chat: a broadcast takes sendMessage, ` +
        'copyMessage, forwardMessage or another send method but sendChatAction',
    );
  }
  return { ok: true, value: method };
}

/** `params`' JSON text: an object of the call's parameters, the same for every recipient. */
export function checkBroadcastParams(
  text: string,
  offset: number,
): Checked<Record<string, unknown>> {
  const parsed = parseJson(text, 'params', offset);
  if (!parsed.ok) return parsed;
  const params = parsed.value;
  if (!isPlainObject(params)) return refused(PARAMS_RULE);
  if ('chat_id' in params) {
    return refused('chat_id goes in chat_ids: params are the same for every recipient');
  }
  return { ok: true, value: params };
}

/**
 * A recipient as Redis keeps it: the chat id's text, a numeric string as its number
 * (`"0042"` is 42), the outbox's rule; undefined when it is none.
 */
export function recipientOf(value: string | number): string | undefined {
  const chat = laneChat(value);
  return chat === undefined ? undefined : String(chat);
}

export function badRecipient(index: number, offset: number): HttpAnswer {
  return refusal(
    `chat_ids[${index}] (at byte ${offset}) must be an integer, a numeric string or an ` +
      '@channelusername',
  );
}

export function tooManyRecipients(offset: number): HttpAnswer {
  return refusal(`chat_ids has more than ${MAX} entries (at byte ${offset})`);
}

/** The body is whole: the call it names, or what it lacks. */
export function completeCall(
  method: string | undefined,
  params: Record<string, unknown> | undefined,
  recipients: { named: boolean; total: number },
): Checked<BroadcastCall> {
  if (method === undefined) return refused(METHOD_REQUIRED);
  if (params === undefined) return refused(`params is required: ${PARAMS_RULE}`);
  if (hasRedirectingMethod(Object.entries(params), method)) {
    return refused('a "method" parameter may only repeat the method of the broadcast');
  }
  if (!recipients.named) return refused(`chat_ids is required: a list of 1 to ${MAX} chat ids`);
  if (recipients.total === 0) return refused(`chat_ids is empty: a broadcast needs 1 to ${MAX}`);
  return { ok: true, value: { method, params } };
}

/**
 * A UUID-shaped id from the client, bot and Idempotency-Key (SHA-256, RFC 4122 variant
 * bits), as the outbox makes its sends'.
 */
export function broadcastIdOf(client: string, bot: string, key: string): string {
  const hex = createHash('sha256').update(`${client}\n${bot}\n${key}`).digest('hex');
  const variant = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

class PrototypeKey extends Error {}

/**
 * JSON as Fastify's parser reads it for REST bodies: `__proto__` and
 * `constructor.prototype` keys refused.
 */
function parseJson(text: string, field: string, offset: number): Checked<unknown> {
  try {
    const value: unknown = JSON.parse(text, (key, item: unknown) => {
      if (
        key === '__proto__' ||
        (key === 'constructor' && isPlainObject(item) && 'prototype' in item)
      ) {
        throw new PrototypeKey();
      }
      return item;
    });
    return { ok: true, value };
  } catch (error) {
    if (error instanceof PrototypeKey) {
      return refused(`${field} may not hold a __proto__ or constructor.prototype key`);
    }
    const reason = error instanceof Error ? `: ${error.message}` : '';
    return refused(`${field} (at byte ${offset}) is not valid JSON${reason}`);
  }
}

function refusal(error: string): HttpAnswer {
  return { status: 400, body: { error } };
}

function refused<T>(error: string): Checked<T> {
  return { ok: false, answer: refusal(error) };
}
