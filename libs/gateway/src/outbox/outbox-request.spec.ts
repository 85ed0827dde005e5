import type { GatewayClient } from '../access/client-directory';
import { checkOutboxRequest } from './outbox-request';

const everything: GatewayClient = { name: 'site', bots: new Set(['main']) };
const narrow: GatewayClient = {
  name: 'narrow',
  bots: new Set(['main']),
  methods: new Set(['sendmessage']),
};

const send = (params: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  method: 'sendMessage',
  params: { text: 'hi', ...params },
  ...extra,
});

function refusal(client: GatewayClient, body: unknown) {
  const checked = checkOutboxRequest(client, body);
  if (checked.ok) throw new Error('accepted');
  return checked.answer;
}

describe('checkOutboxRequest', () => {
  it('takes a send, with a numeric chat string in the lane of its number', () => {
    expect(checkOutboxRequest(everything, send({ chat_id: 42 }))).toEqual({
      ok: true,
      call: { method: 'sendMessage', params: { text: 'hi', chat_id: 42 } },
      chatId: 42,
    });
    expect(checkOutboxRequest(everything, send({ chat_id: '-100123' }))).toMatchObject({
      ok: true,
      call: { params: { chat_id: '-100123' } },
      chatId: -100123,
    });
    expect(checkOutboxRequest(everything, send({ chat_id: '@shop_news' }))).toMatchObject({
      ok: true,
      chatId: '@shop_news',
    });
    expect(checkOutboxRequest(everything, send({ chat_id: 7 }, { callback: false }))).toMatchObject(
      { ok: true },
    );
  });

  it('refuses bodies that are no outbox send, each with its reason', () => {
    const cases: [unknown, RegExp][] = [
      [[1], /the body must be a JSON object/],
      [{ ...send({ chat_id: 1 }), priority: 1 }, /^priority is not a field of an outbox send/],
      [{ params: { chat_id: 1 } }, /^method is required/],
      [send({ chat_id: 1 }, { callback: 'yes' }), /^callback must be true or false/],
      [send({ chat_id: 1 }, { callback: true }), /^callback is not available yet/],
      [{ method: 'sendMessage' }, /^params must be a JSON object/],
      [{ method: 'sendMessage', params: [] }, /^params must be a JSON object/],
      [send({}), /^params.chat_id is required/],
      [send({ chat_id: '' }), /^params.chat_id must be/],
      [send({ chat_id: 1.5 }), /^params.chat_id must be/],
      [send({ chat_id: 'shop news' }), /^params.chat_id must be/],
      [send({ chat_id: { id: 1 } }), /^params.chat_id must be/],
      [send({ chat_id: 1, method: 'getUpdates' }), /"method" parameter may only repeat/],
    ];
    for (const [body, error] of cases) {
      const answer = refusal(everything, body);
      expect(answer.status).toBe(400);
      expect((answer.body as { error: string }).error).toMatch(error);
    }
  });

  it('checks the method as the REST paths do', () => {
    expect(refusal(everything, { method: 'send-message', params: { chat_id: 1 } })).toEqual({
      status: 400,
      body: { error: 'invalid Bot API method name: it must match ^[A-Za-z]+$' },
    });
    expect(refusal(everything, { method: 'GetUpdates', params: { chat_id: 1 } })).toEqual({
      status: 403,
      body: { ok: false, error_code: 403, description: 'Forbidden: reserved by the gateway' },
    });
    expect(refusal(narrow, { method: 'sendPhoto', params: { chat_id: 1 } })).toEqual({
      status: 403,
      body: { error: 'forbidden: this client may not call sendPhoto' },
    });
  });
});
