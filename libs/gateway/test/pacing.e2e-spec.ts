import { startRedisServer, type LocalRedis } from '@relaygram/queue';
import type { RunningApp } from '@relaygram/platform';
import { eventually, type RecordedCall } from '@relaygram/testing';
import { request } from 'undici';
import { startGatewayHarness, type GatewayHarness } from './gateway-harness';
import { get, post, type JsonAnswer } from './http-client';
import { streamedMultipart } from './multipart-body';

interface Healthz {
  status: string;
  pacing?: string;
  bots: {
    id: string;
    outbound?: {
      pacing: string;
      pause: { scope: string; retry_after: number } | null;
      paused_chats: number;
    };
  }[];
}

async function metric(adminUrl: string, name: string, labels: string): Promise<number> {
  const text = await (await request(`${adminUrl}/metrics`)).body.text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`${name}{`) && labels.split(',').every((label) => l.includes(label)));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

const sentTo = (calls: RecordedCall[], chat: number) =>
  calls.filter((c) => c.params['chat_id'] === chat && c.status === 200);

/**
 * A burst for one chat (1 a second, max_wait 3 s) as its callers saw it: those let
 * through reached Telegram a second apart, the others were refused without reaching it.
 * How many get through depends on when the calls arrive (a loaded machine spreads them):
 * one at once, then one a second within max_wait, so two at least and never all.
 */
function expectPacedBurst(
  statuses: number[],
  refusedStatus: number,
  arrived: RecordedCall[],
): { passed: number } {
  const passed = statuses.filter((s) => s === 200).length;
  expect(statuses.filter((s) => s !== 200 && s !== refusedStatus)).toEqual([]);
  expect(passed).toBeGreaterThanOrEqual(2);
  expect(passed).toBeLessThan(statuses.length);
  expect(arrived).toHaveLength(passed);
  for (let i = 1; i < arrived.length; i++) {
    // On the emulator's clock.
    expect(arrived[i]!.time - arrived[i - 1]!.time).toBeGreaterThanOrEqual(1000);
  }
  return { passed };
}

describe('outbound pacing through the gateway', () => {
  let h: GatewayHarness;
  let replica: RunningApp;

  beforeAll(async () => {
    h = await startGatewayHarness({
      outbound: { per_second: 30, per_chat_per_second: 1, chat_burst: 1, max_wait: '3s' },
      otherOutbound: { max_wait: '1s' },
    });
    replica = await h.startReplica();
  });
  afterAll(() => h.close());

  const dropIn = (chat: number, base = h.url) =>
    post(`${base}/bot${h.dropInToken(h.main)}/sendMessage`, { chat_id: chat, text: `to ${chat}` });
  const rest = (chat: number, base = h.url, bot = 'main-bot') =>
    post(
      `${base}/api/v1/${bot}/messages/send`,
      { chat_id: chat, text: `to ${chat}` },
      { 'x-service-token': h.siteToken },
    );

  it("answers the drop-in call that gets no slot within max_wait with Telegram's 429, never calling Telegram", async () => {
    const answers = await Promise.all(Array.from({ length: 5 }, () => dropIn(100)));
    const arrived = sentTo(h.emulator.sent(h.main.id, { method: 'sendMessage' }), 100);
    // Calls arriving together: one at once, then one a second (1.1 s with the transit
    // allowance), 0, 1.1, 2.2 s, and the last two refused.
    const { passed } = expectPacedBurst(
      answers.map((a) => a.status),
      429,
      arrived,
    );
    for (const refused of answers.filter((a) => a.status === 429)) {
      const retryAfter = (refused.body as { parameters?: { retry_after?: number } }).parameters
        ?.retry_after as number;
      expect(retryAfter).toBeGreaterThanOrEqual(3);
      expect(refused.body).toEqual({
        ok: false,
        error_code: 429,
        description: `Too Many Requests: retry after ${retryAfter}`,
        parameters: { retry_after: retryAfter },
      });
    }
    // Every call let through but the first waited for its slot.
    expect(
      await metric(
        h.running.adminUrl,
        'relaygram_outbound_paced_total',
        'bot="main-bot",budget="chat"',
      ),
    ).toBe(passed - 1);
  });

  it('answers REST the way it shows a Telegram 429: 502 ETELEGRAM with retry_after and Retry-After', async () => {
    const answers = await Promise.all(Array.from({ length: 5 }, () => rest(200)));
    expectPacedBurst(
      answers.map((a) => a.status),
      502,
      sentTo(h.emulator.sent(h.main.id), 200),
    );
    const refused = answers.filter((a) => a.status === 502);
    for (const answer of refused) {
      const retryAfter = (answer.body as { retry_after: number }).retry_after;
      expect(answer.body).toEqual({
        error: `ETELEGRAM: 429 Too Many Requests: retry after ${retryAfter}`,
        error_code: 429,
        retry_after: retryAfter,
      });
      expect(answer.headers['retry-after']).toBe(String(retryAfter));
    }
  });

  it('paces a streamed drop-in upload by the chat_id it carries', async () => {
    const upload = async () => {
      const form = streamedMultipart(
        { chat_id: '700' },
        { field: 'document', filename: 'a.txt', contentType: 'text/plain', size: 2048 },
      );
      const res = await request(`${h.url}/bot${h.dropInToken(h.main)}/sendDocument`, {
        method: 'POST',
        headers: { 'content-type': form.contentType },
        body: form.body,
      });
      return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
    };
    const answers = await Promise.all(Array.from({ length: 5 }, upload));
    expectPacedBurst(
      answers.map((a) => a.status),
      429,
      sentTo(h.emulator.sent(h.main.id, { method: 'sendDocument' }), 700),
    );
  });

  it('paces raw/ calls too, and never holds calls that send nothing', async () => {
    const raw = (method: string, body: object) =>
      post(`${h.url}/api/v1/main-bot/raw/${method}`, body, { 'x-service-token': h.siteToken });
    const waitsBefore = await metric(
      h.running.adminUrl,
      'relaygram_outbound_wait_seconds_count',
      'bot="main-bot"',
    );
    const actions = await Promise.all(
      Array.from({ length: 5 }, () => raw('sendChatAction', { chat_id: 300, action: 'typing' })),
    );
    const me = await raw('getMe', {});
    expect([...actions, me].map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(
      await metric(h.running.adminUrl, 'relaygram_outbound_wait_seconds_count', 'bot="main-bot"'),
    ).toBe(waitsBefore);
    const sends = await Promise.all(
      [1, 2].map(() => raw('sendMessage', { chat_id: 300, text: 'x' })),
    );
    expect(sends.map((s) => s.status)).toEqual([200, 200]);
    expect(
      await metric(h.running.adminUrl, 'relaygram_outbound_wait_seconds_count', 'budget="chat"'),
    ).toBeGreaterThanOrEqual(1);
  });

  it('drops a waiting call whose caller hung up: it never reaches Telegram', async () => {
    expect((await dropIn(600)).status).toBe(200);
    const controller = new AbortController();
    const waiting = request(`${h.url}/bot${h.dropInToken(h.main)}/sendMessage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ chat_id: 600, text: 'gone' }),
      signal: controller.signal,
    }).catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 200));
    controller.abort();
    await waiting;
    // Past the slot it would have had (1.1 s after the first).
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(sentTo(h.emulator.sent(h.main.id), 600).map((c) => c.params['text'])).toEqual([
      'to 600',
    ]);
  });

  it('a Telegram 429 with retry_after 3 for one chat pauses it on every replica for 3 s; other chats go on', async () => {
    h.emulator.failTooManyRequests(h.main.id, 3, 'sendMessage', 1);
    const hit = await dropIn(400);
    // Telegram's own answer, passed through the drop-in as it is.
    expect(hit.status).toBe(429);
    const hitAt = Date.now();
    expect(await metric(h.running.adminUrl, 'relaygram_telegram_429_total', 'scope="chat"')).toBe(
      1,
    );

    // The other replica: the paused chat waits out the pause, another chat goes at once.
    const paused = rest(400, replica.url);
    const other = await rest(401, replica.url);
    expect(other.status).toBe(200);
    const health = await get<Healthz>(`${replica.url}/healthz`);
    const main = health.body.bots.find((b) => b.id === 'main-bot');
    expect(main?.outbound).toEqual({ pacing: 'shared', pause: null, paused_chats: 1 });
    expect(
      await metric(replica.adminUrl, 'relaygram_outbound_pauses', 'bot="main-bot",scope="chat"'),
    ).toBe(1);
    expect((await paused).status).toBe(200);

    const calls = h.emulator.sent(h.main.id, { method: 'sendMessage' });
    const resumed = sentTo(calls, 400)[0] as RecordedCall;
    const goneOn = sentTo(calls, 401)[0] as RecordedCall;
    expect(resumed.time - hitAt).toBeGreaterThanOrEqual(2_900);
    expect(goneOn.time).toBeLessThan(resumed.time);
    expect(
      await metric(replica.adminUrl, 'relaygram_outbound_wait_seconds_count', 'budget="pause"'),
    ).toBe(1);
  });

  it('pauses the whole bot when three chats get a 429 within 2 s, and /healthz shows it', async () => {
    h.emulator.failTooManyRequests(h.other.id, 30, 'sendMessage', 3);
    for (const chat of [1, 2, 3]) {
      const answer = await rest(chat, h.url, 'other-bot');
      expect(answer).toMatchObject({ status: 502, body: { error_code: 429, retry_after: 30 } });
    }
    const health = await get<Healthz>(`${replica.url}/healthz`);
    const other = health.body.bots.find((b) => b.id === 'other-bot');
    expect(other?.outbound?.pause?.scope).toBe('bot');
    expect(other?.outbound?.pause?.retry_after).toBeGreaterThan(25);
    const sentBefore = h.emulator.sent(h.other.id).length;
    const refused = await rest(99, replica.url, 'other-bot');
    expect(refused.status).toBe(502);
    expect(refused.body).toMatchObject({ error_code: 429 });
    expect(h.emulator.sent(h.other.id)).toHaveLength(sentBefore);
    expect(
      await metric(
        h.running.adminUrl,
        'relaygram_telegram_429_total',
        'bot="other-bot",scope="bot"',
      ),
    ).toBe(1);
  });
});

/** A Redis of its own, stopped mid-test: sending goes on, paced by the process alone. */
describe('outbound pacing while Redis is away', () => {
  let redis: LocalRedis;
  let h: GatewayHarness;
  let port: number;

  beforeAll(async () => {
    redis = await startRedisServer();
    port = Number(new URL(redis.url).port);
    h = await startGatewayHarness({
      redisUrl: redis.url,
      outbound: { per_chat_per_second: 1, chat_burst: 1, max_wait: '2s' },
    });
  });
  afterAll(async () => {
    await h.close();
    await redis.stop();
  });

  it('sends on with per-process budgets, says pacing is degraded, and shares again when Redis is back', async () => {
    const send = (chat: number, headers: Record<string, string> = {}) =>
      post(
        `${h.url}/api/v1/main-bot/messages/send`,
        { chat_id: chat, text: `to ${chat}` },
        { 'x-service-token': h.siteToken, ...headers },
      );
    expect((await send(1)).status).toBe(200);
    await redis.stop();

    const answers = await Promise.all([send(2), send(2), send(2)]);
    // The process's own budget: one now, one after 1.1 s, and the third (past max_wait
    // when the three arrive together) refused.
    const passed = answers.filter((a) => a.status === 200).length;
    expect(passed).toBeGreaterThanOrEqual(2);
    expect(answers.filter((a) => a.status !== 200).map((a) => a.status)).toEqual(
      Array(3 - passed).fill(502),
    );
    const arrived = sentTo(h.emulator.sent(h.main.id), 2);
    expect(arrived).toHaveLength(passed);
    expect(arrived[1]!.time - arrived[0]!.time).toBeGreaterThanOrEqual(1000);

    const health: JsonAnswer<Healthz> = await get<Healthz>(`${h.url}/healthz`);
    expect(health.status).toBe(503);
    expect(health.body).toMatchObject({ status: 'degraded', pacing: 'degraded' });
    expect(health.body.bots.find((b) => b.id === 'main-bot')?.outbound?.pacing).toBe('degraded');
    expect(await metric(h.running.adminUrl, 'relaygram_outbound_pacing_degraded', '')).toBe(1);

    // An idempotency key cannot be kept without Redis: refused, never sent twice.
    const keyed = await send(3, { 'idempotency-key': 'while-redis-is-away' });
    expect(keyed.status).toBe(503);
    expect(keyed.body).toEqual({
      error: 'Idempotency-Key needs Redis, which does not answer; retry later',
    });

    redis = await startRedisServer({ port });
    await eventually(
      async () => {
        const res = await get<Healthz>(`${h.url}/healthz`);
        return res.status === 200 && res.body.pacing === 'shared';
      },
      { what: 'shared pacing after Redis came back', intervalMs: 100 },
    );
    expect((await send(4)).status).toBe(200);
  });
});
