import { closedPort } from '@relaygram/testing';
import { request } from 'undici';
import { startGatewayHarness, type GatewayHarness } from './gateway-harness';
import { streamedMultipart } from './multipart-body';

interface Exchange {
  path: string;
  status: number;
  text: string;
}

/**
 * Every error path of the REST API and the drop-in, with LOG_LEVEL=debug: neither a
 * log line nor an answer (body or headers) may hold a bot token, the secret half of
 * one, or a client token.
 */
describe('no token in any answer or log line', () => {
  let h: GatewayHarness;
  let offline: GatewayHarness;
  const exchanges: Exchange[] = [];

  async function call(
    target: GatewayHarness,
    path: string,
    init: {
      method?: 'GET' | 'POST' | 'PUT';
      headers?: Record<string, string>;
      body?: string | ReturnType<typeof streamedMultipart>['body'];
    } = {},
  ): Promise<Exchange> {
    const res = await request(`${target.url}${path}`, {
      method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
      headers: init.headers,
      body: init.body,
    });
    const text = `${JSON.stringify(res.headers)}\n${await res.body.text()}`;
    const exchange = { path, status: res.statusCode, text };
    exchanges.push(exchange);
    return exchange;
  }
  const json = (token: string | null) => ({
    'content-type': 'application/json',
    ...(token === null ? {} : { 'x-service-token': token }),
  });
  const secretsOf = (target: GatewayHarness) => [
    ...[target.main, target.other, target.lonely].flatMap((bot) => [
      bot.token,
      bot.token.slice(bot.token.indexOf(':') + 1),
    ]),
    target.siteToken,
    target.narrowToken,
  ];

  beforeAll(async () => {
    h = await startGatewayHarness({
      logLevel: 'debug',
      gateway: { telegramTimeoutMs: 500, uploadLimitBytes: 64 * 1024 },
    });
    const port = await closedPort();
    offline = await startGatewayHarness({
      logLevel: 'debug',
      apiBase: () => `http://127.0.0.1:${port}`,
    });
  });
  afterAll(async () => {
    await h.close();
    await offline.close();
  });

  it('runs every error path', async () => {
    const site = h.siteToken;
    const main = h.main;
    const drop = `/bot${h.dropInToken(main)}`;
    const send = JSON.stringify({ chat_id: 1, text: 'x' });
    // A Telegram 429 pauses its chat: each case after one sends to a chat of its own.
    const sendTo = (chat: number) => JSON.stringify({ chat_id: chat, text: 'x' });
    const expectStatus = async (status: number, exchange: Promise<Exchange>) => {
      const done = await exchange;
      expect({ path: done.path, status: done.status }).toEqual({ path: done.path, status });
    };

    // REST: auth, scope, validation, refusals.
    await expectStatus(401, call(h, '/api/v1/messages/send', { headers: json(null), body: send }));
    await expectStatus(
      401,
      call(h, '/api/v1/messages/send', { headers: json(main.token), body: send }),
    );
    await expectStatus(
      401,
      call(h, '/api/v1/messages/send', { headers: json(`${site}x`), body: send }),
    );
    await expectStatus(
      403,
      call(h, '/api/v1/lonely-bot/messages/send', { headers: json(site), body: send }),
    );
    await expectStatus(
      403,
      call(h, '/api/v1/photos/send', { headers: json(h.narrowToken), body: '{}' }),
    );
    await expectStatus(
      404,
      call(h, `/api/v1/${main.token}/messages/send`, { headers: json(site), body: send }),
    );
    await expectStatus(
      400,
      call(h, '/api/v1/messages/send', { headers: json(site), body: `{"text":"${main.token}"}` }),
    );
    await expectStatus(
      400,
      call(h, '/api/v1/messages/send', { headers: json(site), body: '{bad' }),
    );
    await expectStatus(
      400,
      call(h, '/api/v1/raw/sendMessage', { headers: json(site), body: '{"method":"close"}' }),
    );
    await expectStatus(403, call(h, '/api/v1/raw/getUpdates', { headers: json(site), body: '{}' }));
    await expectStatus(
      415,
      call(h, '/api/v1/messages/send', {
        headers: { 'x-service-token': site, 'content-type': 'text/plain' },
        body: 'x',
      }),
    );

    // REST: Telegram failing in every way.
    h.emulator.failBlockedByUser(main.id, 'sendMessage');
    await expectStatus(502, call(h, '/api/v1/messages/send', { headers: json(site), body: send }));
    h.emulator.failTooManyRequests(main.id, 30, 'sendMessage');
    await expectStatus(502, call(h, '/api/v1/messages/send', { headers: json(site), body: send }));
    // Refused by pacing: chat 1 is paused for 30 s now.
    await expectStatus(502, call(h, '/api/v1/messages/send', { headers: json(site), body: send }));
    h.emulator.failTooManyRequests(main.id, 1, 'sendMessage', 2);
    await expectStatus(
      502,
      call(h, '/api/v1/messages/send', { headers: json(site), body: sendTo(2) }),
    );
    h.emulator.failServerError(main.id, 500, 'sendMessage');
    await expectStatus(
      502,
      call(h, '/api/v1/messages/send', { headers: json(site), body: sendTo(3) }),
    );
    h.emulator.failUnauthorized(main.id);
    await expectStatus(
      502,
      call(h, '/api/v1/messages/send', { headers: json(site), body: sendTo(4) }),
    );
    h.emulator.fail(main.id, { method: 'sendMessage', drop: true });
    await expectStatus(
      502,
      call(h, '/api/v1/messages/send', { headers: json(site), body: sendTo(5) }),
    );
    h.emulator.fail(main.id, { method: 'sendMessage', delayMs: 1500 });
    await expectStatus(
      504,
      call(h, '/api/v1/messages/send', { headers: json(site), body: sendTo(6) }),
    );
    const big = streamedMultipart(
      { chat_id: '7' },
      { field: 'document', filename: 'a', contentType: 'x/y', size: 100_000 },
    );
    await expectStatus(
      413,
      call(h, '/api/v1/documents/send', {
        headers: { 'x-service-token': site, 'content-type': big.contentType },
        body: big.body,
      }),
    );
    const late = streamedMultipart(
      { chat_id: '8' },
      { field: 'document', filename: 'a', contentType: 'x/y', size: 1000 },
      { after: { x: '1' } },
    );
    await expectStatus(
      400,
      call(h, '/api/v1/documents/send', {
        headers: { 'x-service-token': site, 'content-type': late.contentType },
        body: late.body,
      }),
    );
    await expectStatus(
      502,
      call(offline, '/api/v1/messages/send', { headers: json(offline.siteToken), body: send }),
    );

    // Drop-in: auth and refusals.
    await expectStatus(401, call(h, `/bot${main.id}:wrong-client-token-00000/getMe`));
    await expectStatus(401, call(h, `/bot${main.token}/getMe`));
    await expectStatus(401, call(h, `/file/bot${main.token}/documents/a.txt`));
    await expectStatus(403, call(h, `/bot${h.dropInToken(h.lonely)}/getMe`));
    await expectStatus(403, call(h, `/bot${h.dropInToken(main, h.narrowToken)}/sendPhoto`));
    await expectStatus(403, call(h, `${drop}/getUpdates`));
    await expectStatus(403, call(h, `${drop}/test/getMe`));
    await expectStatus(404, call(h, `${drop}/get_me`));
    await expectStatus(404, call(h, `${drop}/getMe`, { method: 'PUT', body: '{}' }));
    await expectStatus(400, call(h, `${drop}/sendMessage?method=close`));
    await expectStatus(
      400,
      call(h, `${drop}/sendMessage`, { headers: json(null), body: '{"method":"logOut"}' }),
    );
    await expectStatus(400, call(h, `${drop}/sendMessage`, { headers: json(null), body: '{bad' }));
    await expectStatus(
      413,
      call(h, `${drop}/sendMessage`, { headers: json(null), body: `"${'x'.repeat(1024 * 1024)}"` }),
    );
    const dropBig = streamedMultipart(
      { chat_id: '9' },
      { field: 'document', filename: 'a', contentType: 'x/y', size: 2 * 1024 * 1024 },
    );
    await expectStatus(
      413,
      call(h, `${drop}/sendDocument`, {
        headers: { 'content-type': dropBig.contentType },
        body: dropBig.body,
      }),
    );

    // Drop-in: refused by pacing (chat 1 is still paused), then Telegram's failures, on
    // the other bot so that the pauses above do not answer for Telegram.
    await expectStatus(429, call(h, `${drop}/sendMessage`, { headers: json(null), body: send }));
    const other = h.other;
    const dropOther = `/bot${h.dropInToken(other)}`;
    h.emulator.failBlockedByUser(other.id, 'sendMessage');
    await expectStatus(
      403,
      call(h, `${dropOther}/sendMessage`, { headers: json(null), body: send }),
    );
    h.emulator.failTooManyRequests(other.id, 3, 'sendMessage');
    await expectStatus(
      429,
      call(h, `${dropOther}/sendMessage`, { headers: json(null), body: sendTo(2) }),
    );
    h.emulator.fail(other.id, { method: 'sendMessage', drop: true });
    await expectStatus(
      502,
      call(h, `${dropOther}/sendMessage`, { headers: json(null), body: sendTo(3) }),
    );
    h.emulator.fail(other.id, { method: 'sendMessage', delayMs: 1500 });
    await expectStatus(
      504,
      call(h, `${dropOther}/sendMessage`, { headers: json(null), body: sendTo(4) }),
    );
    await expectStatus(404, call(h, `/file/bot${h.dropInToken(main)}/documents/missing.txt`));
    await expectStatus(502, call(offline, `/bot${offline.dropInToken(offline.main)}/getMe`));

    // What operators look at.
    await call(h, '/healthz');
    const metrics = await request(`${h.running.adminUrl}/metrics`);
    exchanges.push({
      path: '/metrics',
      status: metrics.statusCode,
      text: await metrics.body.text(),
    });
  });

  it('leaves no token in the answers', () => {
    expect(exchanges.length).toBeGreaterThan(40);
    for (const exchange of exchanges) {
      for (const secret of [...secretsOf(h), ...secretsOf(offline)]) {
        expect({ path: exchange.path, leaked: exchange.text.includes(secret) }).toEqual({
          path: exchange.path,
          leaked: false,
        });
      }
    }
  });

  it('leaves no token in the logs, and logs drop-in paths masked', async () => {
    // Lines are written asynchronously: give the last ones a moment.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const lines = [...h.logs, ...offline.logs];
    expect(lines.length).toBeGreaterThan(40);
    for (const secret of [...secretsOf(h), ...secretsOf(offline)]) {
      const leaking = lines.filter((line) => line.includes(secret));
      expect(leaking).toEqual([]);
    }
    expect(h.logs.some((line) => line.includes(`"/bot${h.main.id}:***/sendMessage"`))).toBe(true);
  });
});
