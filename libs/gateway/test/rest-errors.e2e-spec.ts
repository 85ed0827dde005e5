import { closedPort } from '@relaygram/testing';
import { post, type JsonAnswer } from './http-client';
import { startGatewayHarness, type GatewayHarness } from './gateway-harness';

describe('REST error mapping', () => {
  let h: GatewayHarness;
  const send = (path = 'main-bot/messages/send', body: unknown = { chat_id: 1, text: 'x' }) =>
    post(`${h.url}/api/v1/${path}`, body, { 'x-service-token': h.siteToken });
  const calls = (method = 'sendMessage') => h.emulator.calls(h.main.id, { method });

  beforeAll(async () => {
    h = await startGatewayHarness({ gateway: { telegramTimeoutMs: 1000 } });
  });
  afterAll(() => h.close());
  afterEach(() => h.emulator.clearFailures(h.main.id));

  it('answers a Telegram error with 502, ETELEGRAM and its error_code', async () => {
    h.emulator.failBlockedByUser(h.main.id, 'sendMessage');
    const res = await send();
    expect(res.status).toBe(502);
    expect(res.body).toEqual({
      error: 'ETELEGRAM: 403 Forbidden: bot was blocked by the user',
      error_code: 403,
    });
  });

  it('passes on migrate_to_chat_id', async () => {
    h.emulator.fail(h.main.id, {
      method: 'sendMessage',
      error: {
        code: 400,
        description: 'Bad Request: group chat was upgraded to a supergroup chat',
        migrateToChatId: -1001234567890,
      },
    });
    const res = await send();
    expect(res.status).toBe(502);
    expect(res.body).toEqual({
      error: 'ETELEGRAM: 400 Bad Request: group chat was upgraded to a supergroup chat',
      error_code: 400,
      migrate_to_chat_id: -1001234567890,
    });
  });

  it('answers a Telegram 5xx with 502 and its code, on raw too', async () => {
    h.emulator.failServerError(h.main.id, 500, 'sendMessage');
    const res = await send('raw/sendMessage');
    expect(res.status).toBe(502);
    expect(res.body).toEqual({ error: 'ETELEGRAM: 500 Internal Server Error', error_code: 500 });
  });

  it('answers a dropped connection with 502 EFATAL', async () => {
    h.emulator.fail(h.main.id, { method: 'sendMessage', drop: true });
    const res = await send();
    expect(res.status).toBe(502);
    expect(res.body.error).toMatch(/^EFATAL: /);
    expect(res.body.error_code).toBeUndefined();
  });

  it('answers a timeout with 504', async () => {
    h.emulator.fail(h.main.id, { method: 'sendMessage', delayMs: 3000 });
    const res = await send();
    expect(res.status).toBe(504);
    expect(res.body.error).toMatch(/^ETIMEDOUT: sendMessage got no answer within 1000 ms/);
  });

  describe('429', () => {
    it('waits out retry_after 2 and retries once', async () => {
      const before = calls().length;
      h.emulator.failTooManyRequests(h.main.id, 2, 'sendMessage');
      const res = await send('main-bot/messages/send', { chat_id: 1, text: 'patient' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ text: 'patient' });
      const made = calls().slice(before);
      expect(made.map((c) => c.status)).toEqual([429, 200]);
      // The retry came after the wait Telegram asked for, not before.
      expect((made[1]?.time ?? 0) - (made[0]?.time ?? 0)).toBeGreaterThanOrEqual(1900);
    });

    it('retries an urlencoded raw call the same way', async () => {
      const before = calls().length;
      h.emulator.failTooManyRequests(h.main.id, 1, 'sendMessage');
      const res = await post(`${h.url}/api/v1/raw/sendMessage`, 'chat_id=1&text=form', {
        'x-service-token': h.siteToken,
        'content-type': 'application/x-www-form-urlencoded',
      });
      expect(res.status).toBe(200);
      expect(
        calls()
          .slice(before)
          .map((c) => c.status),
      ).toEqual([429, 200]);
    });

    it('retries only once: a second 429 is answered', async () => {
      const before = calls().length;
      h.emulator.failTooManyRequests(h.main.id, 1, 'sendMessage', 2);
      const res = await send();
      expect(res.status).toBe(502);
      expect(res.body).toMatchObject({ error_code: 429, retry_after: 1 });
      expect(
        calls()
          .slice(before)
          .map((c) => c.status),
      ).toEqual([429, 429]);
    });

    it('answers retry_after 30 at once with 502, retry_after and Retry-After', async () => {
      const before = calls().length;
      h.emulator.failTooManyRequests(h.main.id, 30, 'sendMessage');
      const res: JsonAnswer = await send();
      expect(res.status).toBe(502);
      expect(res.body).toEqual({
        error: 'ETELEGRAM: 429 Too Many Requests: retry after 30',
        error_code: 429,
        retry_after: 30,
      });
      expect(res.headers['retry-after']).toBe('30');
      expect(
        calls()
          .slice(before)
          .map((c) => c.status),
      ).toEqual([429]);
    });
  });
});

describe('REST with Telegram unreachable', () => {
  let h: GatewayHarness;
  beforeAll(async () => {
    const port = await closedPort();
    h = await startGatewayHarness({ apiBase: () => `http://127.0.0.1:${port}` });
  });
  afterAll(() => h.close());

  it('answers 502 EFATAL with the reason', async () => {
    const res = await post(
      `${h.url}/api/v1/messages/send`,
      { chat_id: 1, text: 'x' },
      { 'x-service-token': h.siteToken },
    );
    expect(res.status).toBe(502);
    expect(res.body).toEqual({
      error: expect.stringMatching(/^EFATAL: ECONNREFUSED 127\.0\.0\.1:\d+/),
    });
  });
});
