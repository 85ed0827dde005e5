import type { GatewayClient } from '../access/client-directory';
import {
  broadcastIdOf,
  checkBroadcastMethod,
  checkBroadcastParams,
  completeCall,
  isBroadcastMethod,
  recipientOf,
} from './broadcast-request';

const everything: GatewayClient = { name: 'site', bots: new Set(['shop-bot']) };
const narrow: GatewayClient = {
  name: 'narrow',
  bots: new Set(['shop-bot']),
  methods: new Set(['sendmessage']),
};

describe('isBroadcastMethod', () => {
  it.each([
    'sendMessage',
    'sendPhoto',
    'sendMediaGroup',
    'sendpoll',
    'copyMessage',
    'forwardMessage',
  ])('takes %s', (method) => expect(isBroadcastMethod(method)).toBe(true));

  it.each([
    'sendChatAction',
    'editMessageText',
    'editMessageReplyMarkup',
    'copyMessages',
    'forwardMessages',
    'deleteMessage',
    'getMe',
    'answerCallbackQuery',
  ])('refuses %s', (method) => expect(isBroadcastMethod(method)).toBe(false));
});

describe('checkBroadcastMethod', () => {
  it('answers the method the JSON names', () => {
    expect(checkBroadcastMethod(everything, '"copyMessage"', 10)).toEqual({
      ok: true,
      value: 'copyMessage',
    });
  });

  it.each<[string, GatewayClient, string, number, unknown]>([
    [
      'no JSON',
      everything,
      '"send',
      400,
      { error: expect.stringMatching(/^method \(at byte 7\) is not valid JSON/) },
    ],
    [
      'no string',
      everything,
      '42',
      400,
      { error: 'method must be a string: the Bot API method to call, e.g. "sendMessage"' },
    ],
    [
      'a bad name',
      everything,
      '"send-message"',
      400,
      { error: 'invalid Bot API method name: it must match ^[A-Za-z]+$' },
    ],
    [
      'a reserved method',
      everything,
      '"getUpdates"',
      403,
      { ok: false, error_code: 403, description: 'Forbidden: reserved by the gateway' },
    ],
    [
      'a method out of scope',
      narrow,
      '"sendPhoto"',
      403,
      { error: 'forbidden: this client may not call sendPhoto' },
    ],
    [
      'a method that sends nothing',
      everything,
      '"getMe"',
      400,
      { error: expect.stringMatching(/^getMe does not send a message to a chat/) },
    ],
  ])('refuses %s', (_name, client, text, status, body) => {
    expect(checkBroadcastMethod(client, text, 7)).toEqual({ ok: false, answer: { status, body } });
  });
});

describe('checkBroadcastParams', () => {
  it('answers the parameters', () => {
    const text = '{"text":"hi","reply_markup":{"inline_keyboard":[]}}';
    expect(checkBroadcastParams(text, 0)).toEqual({ ok: true, value: JSON.parse(text) });
  });

  it.each([
    ['[]', "params must be a JSON object of the method's Bot API parameters"],
    ['null', "params must be a JSON object of the method's Bot API parameters"],
    ['{"chat_id":1}', 'chat_id goes in chat_ids: params are the same for every recipient'],
    ['{"a":{"__proto__":{"x":1}}}', 'params may not hold a __proto__ or constructor.prototype key'],
    [
      '{"constructor":{"prototype":{}}}',
      'params may not hold a __proto__ or constructor.prototype key',
    ],
    ['{"a":}', 'params (at byte 3) is not valid JSON'],
  ])('refuses %s', (text, error) => {
    const checked = checkBroadcastParams(text, 3);
    expect(checked.ok).toBe(false);
    expect(!checked.ok && (checked.answer.body as { error: string }).error).toMatch(
      new RegExp(`^${error.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
    );
  });
});

describe('recipientOf', () => {
  it.each<[string | number, string | undefined]>([
    [42, '42'],
    [-1001234567890, '-1001234567890'],
    ['-1001234567890', '-1001234567890'],
    ['0042', '42'],
    ['@shop_news', '@shop_news'],
    ['12345678901234567890', '12345678901234567890'],
    [1.5, undefined],
    [2 ** 53, undefined],
    ['', undefined],
    ['shop_news', undefined],
    ['@shop-news', undefined],
    [' 42', undefined],
  ])('reads %p as %p', (value, stored) => expect(recipientOf(value)).toBe(stored));
});

describe('completeCall', () => {
  const named = { named: true, total: 3 };

  it('answers the call once method, params and recipients are there', () => {
    expect(completeCall('sendMessage', { text: 'x' }, named)).toEqual({
      ok: true,
      value: { method: 'sendMessage', params: { text: 'x' } },
    });
    // A method parameter naming the broadcast's own method changes nothing.
    expect(completeCall('sendMessage', { method: 'SENDMESSAGE' }, named).ok).toBe(true);
  });

  it.each<
    [
      string,
      string | undefined,
      Record<string, unknown> | undefined,
      { named: boolean; total: number },
      string,
    ]
  >([
    ['no method', undefined, {}, named, 'method is required'],
    ['no params', 'sendMessage', undefined, named, 'params is required'],
    ['another method in params', 'sendMessage', { method: 'getMe' }, named, 'a "method" parameter'],
    ['no chat_ids', 'sendMessage', {}, { named: false, total: 0 }, 'chat_ids is required'],
    ['no recipient', 'sendMessage', {}, { named: true, total: 0 }, 'chat_ids is empty'],
  ])('refuses %s', (_name, method, params, recipients, error) => {
    const checked = completeCall(method, params, recipients);
    expect(!checked.ok && (checked.answer.body as { error: string }).error).toMatch(
      new RegExp(`^${error}`),
    );
  });
});

describe('broadcastIdOf', () => {
  it('is a UUID of the client, bot and key: stable, and apart for each', () => {
    const id = broadcastIdOf('site', 'shop-bot', 'digest-1');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(broadcastIdOf('site', 'shop-bot', 'digest-1')).toBe(id);
    expect(broadcastIdOf('other', 'shop-bot', 'digest-1')).not.toBe(id);
    expect(broadcastIdOf('site', 'sol-prod', 'digest-1')).not.toBe(id);
    expect(broadcastIdOf('site', 'shop-bot', 'digest-2')).not.toBe(id);
  });
});
