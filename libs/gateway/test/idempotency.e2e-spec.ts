import type { RunningApp } from '@relaygram/platform';
import { createRedis } from '@relaygram/queue';
import { keysMatching, redisUrl, pngHead } from '@relaygram/testing';
import { startGatewayHarness, type GatewayHarness } from './gateway-harness';
import { post, type JsonAnswer } from './http-client';
import { request } from 'undici';
import { streamedMultipart } from './multipart-body';

/** Idempotency-Key on the REST API, with Stripe's semantics, across two gateway replicas. */
describe('Idempotency-Key on REST', () => {
  let h: GatewayHarness;
  let replica: RunningApp;
  let keys = 0;
  const newKey = () => `order-48213-${Date.now()}-${++keys}`;

  beforeAll(async () => {
    h = await startGatewayHarness({ outbound: { max_wait: '2s' } });
    replica = await h.startReplica();
  });
  afterAll(() => h.close());

  const send = (base: string, key: string | undefined, body: object, path = 'messages/send') =>
    post(`${base}/api/v1/main-bot/${path}`, body, {
      'x-service-token': h.siteToken,
      ...(key === undefined ? {} : { 'idempotency-key': key }),
    });
  const sentWith = (text: string) =>
    h.emulator.sent(h.main.id, { method: 'sendMessage' }).filter((c) => c.params['text'] === text);
  const comparable = (a: JsonAnswer) => ({ status: a.status, text: a.text });

  it('runs a key sent 20 times at once from two replicas once, and answers all 20 alike', async () => {
    const key = newKey();
    const body = { chat_id: 501, text: 'shipped #48213' };
    // Telegram takes its time, so the repeats arrive while the first runs.
    h.emulator.fail(h.main.id, { method: 'sendMessage', delayMs: 400 });
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => send(i % 2 === 0 ? h.url : replica.url, key, body)),
    );
    expect(sentWith('shipped #48213')).toHaveLength(1);
    expect(answers[0]).toMatchObject({ status: 200, body: { text: 'shipped #48213' } });
    const first = comparable(answers[0] as JsonAnswer);
    expect(answers.map(comparable)).toEqual(Array.from({ length: 20 }, () => first));
    // All but the one that ran were told they got a stored answer.
    expect(answers.filter((a) => a.headers['idempotent-replayed'] === 'true')).toHaveLength(19);
  });

  it('answers a later repeat with the first answer, Telegram errors included, without calling Telegram', async () => {
    const key = newKey();
    const body = { chat_id: 502, text: 'blocked one' };
    h.emulator.failBlockedByUser(h.main.id, 'sendMessage');
    const first = await send(h.url, key, body);
    expect(first).toMatchObject({ status: 502, body: { error_code: 403 } });
    const again = await send(replica.url, key, body);
    expect(comparable(again)).toEqual(comparable(first));
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(sentWith('blocked one')).toHaveLength(1);
  });

  it('answers 422 to the same key with another body, and to another path', async () => {
    const key = newKey();
    expect((await send(h.url, key, { chat_id: 503, text: 'one' })).status).toBe(200);
    const other = await send(replica.url, key, { chat_id: 503, text: 'two' });
    expect(other.status).toBe(422);
    expect(other.body).toEqual({
      error:
        'this Idempotency-Key was already used with another request; use a new key for a new request',
    });
    const raw = await send(h.url, key, { chat_id: 503, text: 'one' }, 'raw/sendMessage');
    expect(raw.status).toBe(422);
    expect(sentWith('two')).toHaveLength(0);
  });

  it('sees the same request in another key order or encoding as the same', async () => {
    const key = newKey();
    const first = await send(h.url, key, { chat_id: 504, text: 'same', options: { a: 1, b: 2 } });
    const reordered = await post(
      `${replica.url}/api/v1/main-bot/messages/send`,
      '{"options":{"b":2,"a":1},"text":"same","chat_id":504}',
      {
        'content-type': 'application/json',
        'x-service-token': h.siteToken,
        'idempotency-key': key,
      },
    );
    expect(comparable(reordered)).toEqual(comparable(first));
    expect(sentWith('same')).toHaveLength(1);
  });

  it('keeps keys apart per client and per bot', async () => {
    const key = newKey();
    const body = { chat_id: 505, text: 'per client' };
    expect((await send(h.url, key, body)).status).toBe(200);
    const narrow = await post(`${h.url}/api/v1/main-bot/messages/send`, body, {
      'x-service-token': h.narrowToken,
      'idempotency-key': key,
    });
    expect(narrow.status).toBe(200);
    expect(narrow.headers['idempotent-replayed']).toBeUndefined();
    const otherBot = await post(`${h.url}/api/v1/other-bot/messages/send`, body, {
      'x-service-token': h.siteToken,
      'idempotency-key': key,
    });
    expect(otherBot.status).toBe(200);
    expect(sentWith('per client')).toHaveLength(2);
  });

  it('answers 409 to a repeat still waiting for the first after max_wait', async () => {
    const key = newKey();
    const body = { chat_id: 506, text: 'slow one' };
    h.emulator.fail(h.main.id, { method: 'sendMessage', delayMs: 4_000 });
    const first = send(h.url, key, body);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const repeat = await send(replica.url, key, body);
    expect(repeat.status).toBe(409);
    expect(repeat.body).toEqual({
      error: 'a request with this Idempotency-Key is still running; retry later',
    });
    expect((await first).status).toBe(200);
    expect(sentWith('slow one')).toHaveLength(1);
  });

  it('gives the key back when pacing refused the call, so a retry sends it', async () => {
    const key = newKey();
    const body = { chat_id: 507, text: 'after the pause' };
    h.emulator.failTooManyRequests(h.main.id, 3, 'sendMessage', 1);
    // Telegram's 429 (retry_after 3 > max_wait 2 s): stored, like any answer from Telegram.
    expect((await send(h.url, newKey(), { chat_id: 507, text: 'hit' })).status).toBe(502);
    const refused = await send(h.url, key, body);
    expect(refused).toMatchObject({ status: 502, body: { error_code: 429 } });
    expect(refused.headers['idempotent-replayed']).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 3_100));
    const retried = await send(replica.url, key, body);
    expect(retried.status).toBe(200);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(sentWith('after the pause')).toHaveLength(1);
  });

  it('keeps uploads once too, without reading the file again', async () => {
    const key = newKey();
    const upload = async (base: string) => {
      const form = streamedMultipart(
        { chat_id: '508', options: JSON.stringify({ caption: 'cat' }) },
        {
          field: 'photo',
          filename: 'cat.png',
          contentType: 'image/png',
          size: 4096,
          head: pngHead(64, 64),
        },
      );
      const res = await request(`${base}/api/v1/main-bot/photos/send`, {
        method: 'POST',
        headers: {
          'content-type': form.contentType,
          'x-service-token': h.siteToken,
          'idempotency-key': key,
        },
        body: form.body,
      });
      return { status: res.statusCode, text: await res.body.text(), headers: res.headers };
    };
    const first = await upload(h.url);
    expect(first.status).toBe(200);
    const again = await upload(replica.url);
    expect({ status: again.status, text: again.text }).toEqual({
      status: first.status,
      text: first.text,
    });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(
      h.emulator
        .sent(h.main.id, { method: 'sendPhoto' })
        .filter((c) => c.params['chat_id'] === 508),
    ).toHaveLength(1);
  });

  it('keeps one small string per key in Redis, for 24 h', async () => {
    const prefix = /prefix: (\S+)/.exec(h.yaml)?.[1] as string;
    const redis = createRedis(redisUrl());
    try {
      const key = newKey();
      await send(h.url, key, { chat_id: 510, text: 'kept' });
      const stored = await keysMatching(redis, `${prefix}:idempotency:*`);
      expect(stored.length).toBeGreaterThanOrEqual(1);
      const ttls = await Promise.all(stored.map((k) => redis.pttl(k)));
      for (const ttl of ttls) {
        expect(ttl).toBeGreaterThan(23 * 3600 * 1000);
        expect(ttl).toBeLessThanOrEqual(24 * 3600 * 1000);
      }
      // The request is kept as a digest; the value is its answer and little else.
      const values = await Promise.all(stored.map((k) => redis.get(k)));
      for (const value of values) {
        expect(value).not.toContain(key);
        expect((value ?? '').length).toBeLessThan(1500);
      }
    } finally {
      redis.disconnect();
    }
  });

  it('refuses a key that is not 1-255 printable ASCII characters', async () => {
    for (const key of ['x'.repeat(256), 'tab\there']) {
      const answer = await send(h.url, key, { chat_id: 509, text: 'bad key' });
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({
        error: 'the Idempotency-Key header must be 1-255 printable ASCII characters',
      });
    }
    expect(sentWith('bad key')).toHaveLength(0);
  });
});
