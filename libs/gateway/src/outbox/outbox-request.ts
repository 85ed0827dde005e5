import type { OutboxCall } from '@relaygram/contracts';
import { checkMethod } from '../access/access-check';
import type { GatewayClient } from '../access/client-directory';
import { hasRedirectingMethod } from '../access/method-rules';
import type { HttpAnswer } from '../http/http-answer';
import { isPlainObject } from '../rest/dto/field.decorators';
import { restDenial } from '../rest/rest-answers';

/** A send the outbox may take: the call as the dispatcher will make it, and its lane's chat. */
export interface OutboxRequest {
  call: OutboxCall;
  /** `params.chat_id`, a numeric string as its number, so both forms share one lane. */
  chatId: number | string;
}

export type CheckedOutboxRequest =
  ({ ok: true } & OutboxRequest) | { ok: false; answer: HttpAnswer };

const FIELDS = new Set(['method', 'params', 'callback']);
const NUMERIC_CHAT = /^-?\d{1,20}$/;
const CHANNEL_USERNAME = /^@[A-Za-z0-9_]{1,64}$/;

/**
 * Checks an outbox body (`{ method, params, callback? }`) in the order a REST call is
 * checked: its shape, then its method (name, reserved, the client's `methods`), then
 * the parameters. Telegram sees them only later, so only what the gateway itself needs
 * is checked here: `chat_id`, which names the send's lane, and no `method` parameter
 * that would turn the send into another call.
 */
export function checkOutboxRequest(client: GatewayClient, body: unknown): CheckedOutboxRequest {
  if (!isPlainObject(body)) {
    return refused('the body must be a JSON object: {"method": ..., "params": {...}}');
  }
  const unknown = Object.keys(body).find((key) => !FIELDS.has(key));
  if (unknown !== undefined) {
    return refused(`${unknown} is not a field of an outbox send (method, params, callback)`);
  }
  if (body.method === undefined) {
    return refused('method is required: the Bot API method to call, e.g. "sendMessage"');
  }
  const denial = checkMethod(client, body.method);
  if (denial) return { ok: false, answer: restDenial(denial) };
  const method = body.method as string;
  if (body.callback !== undefined && typeof body.callback !== 'boolean') {
    return refused('callback must be true or false');
  }
  if (body.callback === true) {
    return refused(
      "callback is not available yet: outbox callbacks (the client's callback_url) are " +
        'not built; read the status with GET .../outbox/:id',
    );
  }
  const params = body.params;
  if (!isPlainObject(params)) {
    return refused(
      'params must be a JSON object of the Bot API parameters (file_id or URL for media)',
    );
  }
  const chatId = laneChat(params.chat_id);
  if (chatId === undefined) {
    return refused(
      params.chat_id === undefined
        ? 'params.chat_id is required: outbox sends are ordered per chat'
        : 'params.chat_id must be an integer, a numeric string or an @channelusername',
    );
  }
  if (hasRedirectingMethod(Object.entries(params), method)) {
    return refused('a "method" parameter may only repeat the method of the send');
  }
  return { ok: true, call: { method, params }, chatId };
}

/** The lane's chat of a `chat_id`: a numeric string as its number; undefined when unusable. */
export function laneChat(value: unknown): number | string | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : undefined;
  if (typeof value !== 'string') return undefined;
  if (CHANNEL_USERNAME.test(value)) return value;
  if (!NUMERIC_CHAT.test(value)) return undefined;
  const number = Number(value);
  // Past 2^53 the text is the only exact form; Telegram's ids stay well below it.
  return Number.isSafeInteger(number) ? number : value;
}

function refused(error: string): CheckedOutboxRequest {
  return { ok: false, answer: { status: 400, body: { error } } };
}
