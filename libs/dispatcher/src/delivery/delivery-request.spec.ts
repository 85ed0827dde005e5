import { randomBytes } from 'node:crypto';
import { Secret, type RouteConfig } from '@relaygram/config';
import type { DeliveryEntry } from '@relaygram/queue';
import { verifyRelaygramV1, verifyStandardWebhook } from '@relaygram/signing';
import { Webhook } from 'standardwebhooks';
import { buildDeliveryRequest, envelopeBody, prepareRoute } from './delivery-request';

const UPDATE = Buffer.from(
  '{"update_id":9001,"message":{"message_id":5,"chat":{"id":-100,"type":"group"},"text":"caf\\u00e9 ✓"}}',
);
const entry: DeliveryEntry = {
  deliveryId: '3f1c7c0e-8a55-4a55-9a62-5f6d2a2b0c11',
  updateId: 9001,
  bot: 'shop-bot',
  route: 'shop',
  acceptedAt: 1,
  body: UPDATE,
};

function route(overrides: Partial<RouteConfig> = {}): RouteConfig {
  return {
    name: 'shop',
    bots: ['shop-bot'],
    targetUrl: 'http://127.0.0.1:1/hook',
    format: 'update',
    ordering: 'chat',
    concurrency: 32,
    timeoutMs: 10_000,
    signature: 'relaygram-v1',
    webhookReply: true,
    retry: { maxAgeMs: 86_400_000, backoffCapMs: 300_000, maxConsecutive5xx: 8 },
    ...overrides,
  };
}

describe('buildDeliveryRequest', () => {
  it('sends the stored bytes unchanged with every header of the spec', () => {
    const { headers, body } = buildDeliveryRequest(entry, prepareRoute(route()), 3);
    expect(body).toBe(UPDATE);
    expect(headers).toEqual({
      'Content-Type': 'application/json',
      'User-Agent': 'Relaygram-Dispatcher',
      'X-Telegram-Update-Id': '9001',
      'X-Update-Id': '9001',
      'X-Relaygram-Bot': 'shop-bot',
      'X-Webhook-Route': 'shop',
      'X-Webhook-Attempt': '3',
      'X-Relaygram-Delivery-Id': entry.deliveryId,
    });
  });

  it('adds the service token and the Telegram secret token when configured', () => {
    const { headers } = buildDeliveryRequest(
      entry,
      prepareRoute(
        route({
          serviceToken: new Secret('svc-token-123'),
          telegramSecretToken: new Secret('tg_SECRET-1'),
        }),
      ),
      1,
    );
    expect(headers['X-Service-Token']).toBe('svc-token-123');
    expect(headers['X-Telegram-Bot-Api-Secret-Token']).toBe('tg_SECRET-1');
  });

  it('signs relaygram-v1 over the exact bytes, afresh at each attempt', () => {
    const secret = 'a-signing-secret-of-some-length';
    const prepared = prepareRoute(route({ signingSecret: new Secret(secret) }));
    const now = Math.floor(Date.now() / 1000);
    const first = buildDeliveryRequest(entry, prepared, 1, now);
    const later = buildDeliveryRequest(entry, prepared, 2, now + 60);
    expect(verifyRelaygramV1(secret, first.body, first.headers)).toMatchObject({ timestamp: now });
    expect(verifyRelaygramV1(secret, later.body, later.headers)).toMatchObject({
      timestamp: now + 60,
    });
    expect(later.headers['X-Webhook-Signature']).not.toBe(first.headers['X-Webhook-Signature']);
    expect(later.headers['X-Webhook-Signature']).toMatch(/^v1=[0-9a-f]{64}$/);
    expect(() => verifyRelaygramV1(secret, Buffer.from(`${UPDATE} `), first.headers)).toThrow();
  });

  it('signs standard-webhooks so the reference library verifies it', () => {
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const prepared = prepareRoute(
      route({
        signature: 'standard-webhooks',
        signingSecret: new Secret(secret),
        format: 'envelope',
      }),
    );
    const { headers, body } = buildDeliveryRequest(entry, prepared, 1);
    expect(headers['webhook-id']).toBe(entry.deliveryId);
    expect(verifyStandardWebhook(secret, body, headers)).toBeDefined();
    const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
    expect(new Webhook(secret).verify(body.toString('utf8'), lower)).toEqual(
      JSON.parse(body.toString('utf8')),
    );
  });
});

describe('envelopeBody', () => {
  it('wraps the payload with bot_id and update_id', () => {
    expect(JSON.parse(envelopeBody(entry).toString('utf8'))).toEqual({
      bot_id: 'shop-bot',
      update_id: 9001,
      message: { message_id: 5, chat: { id: -100, type: 'group' }, text: 'café ✓' },
    });
  });

  it('keeps any type name as a plain key, and copes with an update without a payload', () => {
    const odd = { ...entry, body: Buffer.from('{"update_id":9001,"__proto__":{"x":1}}') };
    expect(envelopeBody(odd).toString('utf8')).toBe(
      '{"bot_id":"shop-bot","update_id":9001,"__proto__":{"x":1}}',
    );
    const bare = { ...entry, body: Buffer.from(' {\n "update_id":9001}\n') };
    expect(envelopeBody(bare).toString('utf8')).toBe('{"bot_id":"shop-bot",\n "update_id":9001}\n');
  });

  it('passes the payload bytes through: big numbers intact, any depth', () => {
    const big = {
      ...entry,
      body: Buffer.from('{"update_id":9001,"message":{"id":12345678901234567890}}'),
    };
    expect(envelopeBody(big).toString('utf8')).toBe(
      '{"bot_id":"shop-bot","update_id":9001,"message":{"id":12345678901234567890}}',
    );
    const depth = 100_000;
    const deep = `{"update_id":9001,"message":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`;
    const body = envelopeBody({ ...entry, body: Buffer.from(deep) }).toString('utf8');
    expect(body.startsWith('{"bot_id":"shop-bot","update_id":9001,"message":{"a":{"a":')).toBe(
      true,
    );
    expect(body.length).toBe(deep.length + '"bot_id":"shop-bot",'.length);
  });
});
