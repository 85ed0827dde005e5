import { randomBytes } from 'node:crypto';
import { request } from 'undici';
import { verifyRelaygramV1, verifyStandardWebhook } from '@relaygram/signing';
import { RecordingReceiver, eventually } from '@relaygram/testing';
import type { RunningApp } from '@relaygram/platform';
import { Webhook } from 'standardwebhooks';
import { DispatcherHarness, messageUpdate } from './support/dispatcher-harness';

const V1_SECRET = randomBytes(24).toString('base64url');
const WHSEC = `whsec_${randomBytes(32).toString('base64')}`;
const SERVICE_TOKEN = randomBytes(20).toString('base64url');
const TG_SECRET = randomBytes(20).toString('base64url');

describe('dispatcher: what a target receives', () => {
  let h: DispatcherHarness;
  let receiver: RecordingReceiver;
  let app: RunningApp;

  beforeAll(async () => {
    h = await DispatcherHarness.create('delivery');
    receiver = await RecordingReceiver.start();
    h.writeConfig(
      `
routes:
  - name: plain
    target_url: ${receiver.url}/plain?key=abc
    signing_secret_env: V1_SECRET
    service_token_env: SERVICE_TOKEN
    telegram_secret_token_env: TG_SECRET
    retry: { backoff_cap: 1s }
  - name: wrapped
    target_url: ${receiver.url}/wrapped
    format: envelope
    signing_secret_env: WHSEC
    signature: standard-webhooks
    ordering: strict
`,
      { secrets: { V1_SECRET, WHSEC, SERVICE_TOKEN, TG_SECRET } },
    );
    app = await h.start();
  });

  afterAll(async () => {
    await h.cleanup();
    await receiver.stop();
  });

  afterEach(() => receiver.reset());

  it('sends format update as the received bytes, with every header, signed relaygram-v1', async () => {
    const raw = Buffer.from(
      '{"update_id":4242,"message":{"message_id":1,"chat":{"id":7,"type":"private"},"text":"h\\u00e9llo  ✓"}}',
    );
    const deliveryId = 'a0a0a0a0-1111-4222-8333-444455556666';
    await h.fixture.enqueuer.enqueue({
      bot: 'bot-a',
      updateId: 4242,
      body: raw,
      deliveries: [{ route: 'plain', lane: 'plain.bot-a.c7', deliveryId }],
    });
    const [got] = await receiver.waitFor(1);
    expect(got.path).toBe('/plain?key=abc');
    expect(got.method).toBe('POST');
    expect(got.body.equals(raw)).toBe(true);
    expect(got.headers).toMatchObject({
      'content-type': 'application/json',
      'x-telegram-update-id': '4242',
      'x-update-id': '4242',
      'x-relaygram-bot': 'bot-a',
      'x-webhook-route': 'plain',
      'x-webhook-attempt': '1',
      'x-relaygram-delivery-id': deliveryId,
      'x-service-token': SERVICE_TOKEN,
      'x-telegram-bot-api-secret-token': TG_SECRET,
    });
    expect(verifyRelaygramV1(V1_SECRET, got.body, got.headers)).toMatchObject({
      scheme: 'relaygram-v1',
    });
    expect(Math.abs(Number(got.headers['x-webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(
      5,
    );
  });

  it('sends format envelope signed standard-webhooks, verified by the reference library', async () => {
    const update = messageUpdate(77, -1001, 'envelope me');
    const { deliveries } = await h.enqueue(update);
    const wrapped = deliveries.find((d) => d.route === 'wrapped')!;
    const got = await receiver.waitFor((d) => d.path === '/wrapped');
    expect(got.json).toEqual({ bot_id: 'bot-a', update_id: 77, message: update.message });
    expect(got.headers['webhook-id']).toBe(wrapped.deliveryId);
    expect(verifyStandardWebhook(WHSEC, got.body, got.headers)).toBeDefined();
    expect(new Webhook(WHSEC).verify(got.body.toString('utf8'), got.headers)).toEqual(got.json);
    expect(got.headers['x-service-token']).toBeUndefined();
    // The other route got the update as sent.
    const plain = await receiver.waitFor((d) => d.path.startsWith('/plain'));
    expect(plain.json).toEqual(update);
  });

  it('keeps the delivery id across retries, counts attempts and signs each one afresh', async () => {
    let failures = 0;
    receiver.respondWith((d) =>
      d.path.startsWith('/plain') && failures++ < 2 ? { status: 503 } : { status: 204 },
    );
    const { deliveries } = await h.enqueue(messageUpdate(90, 90));
    const plain = deliveries.find((d) => d.route === 'plain')!;
    await receiver.waitFor((d) => d.path.startsWith('/plain') && d.status === 204, {
      timeoutMs: 10_000,
    });
    const attempts = receiver.deliveries.filter((d) => d.path.startsWith('/plain'));
    expect(attempts.map((d) => d.headers['x-webhook-attempt'])).toEqual(['1', '2', '3']);
    expect(new Set(attempts.map((d) => d.headers['x-relaygram-delivery-id']))).toEqual(
      new Set([plain.deliveryId]),
    );
    // Each attempt is signed when it is sent: its timestamp is its own send time, in whole
    // seconds, so the second it arrived in is that one or the next.
    for (const attempt of attempts) {
      const { timestamp } = verifyRelaygramV1(V1_SECRET, attempt.body, attempt.headers);
      expect([0, 1]).toContain(Math.floor(attempt.receivedAt / 1000) - timestamp);
    }
  });

  it('logs one line per outcome with bot, update_id, route, attempt, delivery_id, status, and no secret', async () => {
    const { deliveries } = await h.enqueue(messageUpdate(120, 5));
    const plain = deliveries.find((d) => d.route === 'plain')!;
    const delivered = () =>
      h.logs.find((l) => l.msg === 'delivered' && l.delivery_id === plain.deliveryId);
    await eventually(() => delivered() !== undefined, { what: 'the delivered log line' });
    const line = delivered();
    expect(line).toMatchObject({
      bot: 'bot-a',
      update_id: 120,
      route: 'plain',
      attempt: 1,
      delivery_id: plain.deliveryId,
      status: 204,
    });
    const text = JSON.stringify(h.logs);
    for (const secret of [V1_SECRET, WHSEC, SERVICE_TOKEN, TG_SECRET, 'key=abc', h.bots['bot-a']])
      expect(text).not.toContain(secret);
  });

  it('reports ready once its workers run, and counts deliveries in /metrics', async () => {
    const ready = await request(`${app.url}/health/ready`);
    expect(ready.statusCode).toBe(200);
    expect(JSON.stringify(await ready.body.json())).toContain('dispatcher');
    const metrics = await request(`${app.adminUrl}/metrics`);
    const text = await metrics.body.text();
    expect(text).toMatch(
      /relaygram_deliveries_total\{[^}]*route="plain"[^}]*outcome="delivered"[^}]*\} [1-9]/,
    );
  });
});
