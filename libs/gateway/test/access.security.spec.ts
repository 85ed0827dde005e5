// The default import is node:crypto itself, the object the signing lib calls into (a
// namespace import would be a copy, and a spy on it would see nothing).
import crypto from 'node:crypto';
import { RecordingReceiver } from '@relaygram/testing';
import { Client, request } from 'undici';
import { connect } from 'node:net';
import { startGatewayHarness, type GatewayHarness } from './gateway-harness';

const RESERVED = { ok: false, error_code: 403, description: 'Forbidden: reserved by the gateway' };
const RESERVED_METHODS = ['getUpdates', 'setWebhook', 'deleteWebhook', 'logOut', 'close'];
const caseVariants = (name: string) => [name, name.toLowerCase(), name.toUpperCase()];

interface Answer {
  status: number;
  text: string;
}

async function call(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  const res = await request(url, {
    method: (init.method ?? (init.body === undefined ? 'GET' : 'POST')) as 'GET',
    headers: init.headers,
    body: init.body,
  });
  return { status: res.statusCode, text: await res.body.text() };
}

/**
 * The gateway's locks: client tokens compared as digests (SPEC section 6), each client
 * held to its bots and methods, the reserved methods refused on every path, downloads
 * kept under the bot's file path, and every call sent to the configured API root only.
 */
describe('gateway security', () => {
  let h: GatewayHarness;
  const json = (token?: string) => ({
    'content-type': 'application/json',
    ...(token === undefined ? {} : { 'x-service-token': token }),
  });
  const telegramCalls = () => h.emulator.calls().length;

  beforeAll(async () => {
    h = await startGatewayHarness();
  });
  afterAll(() => h.close());

  describe('client tokens go through the one digest comparison', () => {
    let compare: jest.SpyInstance;
    beforeAll(() => {
      compare = jest.spyOn(crypto, 'timingSafeEqual');
    });
    afterAll(() => compare.mockRestore());

    const variants = () => ({
      'first client': h.siteToken,
      'last client': h.narrowToken,
      'wrong first byte': `${h.siteToken[0] === 'a' ? 'b' : 'a'}${h.siteToken.slice(1)}`,
      'wrong last byte': `${h.siteToken.slice(0, -1)}${h.siteToken.endsWith('a') ? 'b' : 'a'}`,
      shorter: h.siteToken.slice(0, 8),
      longer: `${h.siteToken}${h.siteToken}`,
    });

    async function comparisons(send: (token: string) => Promise<Answer>) {
      const counts: Record<string, number> = {};
      const statuses: Record<string, number> = {};
      for (const [name, token] of Object.entries(variants())) {
        compare.mockClear();
        statuses[name] = (await send(token)).status;
        counts[name] = compare.mock.calls.length;
      }
      return { counts, statuses };
    }

    it('REST X-Service-Token: one digest comparison per configured client, whatever the token', async () => {
      const { counts, statuses } = await comparisons((token) =>
        call(`${h.url}/api/v1/main-bot/messages/send`, {
          headers: json(token),
          body: JSON.stringify({ chat_id: 1, text: 'x' }),
        }),
      );
      expect(new Set(Object.values(counts))).toEqual(new Set([2]));
      expect(statuses).toEqual({
        'first client': 200,
        'last client': 200,
        'wrong first byte': 401,
        'wrong last byte': 401,
        shorter: 401,
        longer: 401,
      });
    });

    it('drop-in token in the path: the same', async () => {
      const { counts, statuses } = await comparisons((token) =>
        call(`${h.url}/bot${h.main.id}:${token}/getMe`),
      );
      expect(new Set(Object.values(counts))).toEqual(new Set([2]));
      expect(statuses['first client']).toBe(200);
      expect(statuses['last client']).toBe(200);
      expect(statuses['wrong last byte']).toBe(401);
    });
  });

  it('holds each client to its bots and methods, REST and drop-in, before Telegram hears of it', async () => {
    // site: main-bot and other-bot, every method; narrow: main-bot, sendMessage and getMe.
    const cases: { token: string; bot: string; botId: number; method: string; allowed: boolean }[] =
      [];
    for (const [token, name] of [
      [h.siteToken, 'site'],
      [h.narrowToken, 'narrow'],
    ] as const) {
      for (const [bot, botId] of [
        ['main-bot', h.main.id],
        ['other-bot', h.other.id],
        ['lonely-bot', h.lonely.id],
      ] as const) {
        for (const method of ['sendMessage', 'getMe', 'sendChatAction', 'getChat']) {
          const botOk = bot === 'main-bot' || (name === 'site' && bot === 'other-bot');
          const methodOk = name === 'site' || method === 'sendMessage' || method === 'getMe';
          cases.push({ token, bot, botId, method, allowed: botOk && methodOk });
        }
      }
    }
    const params = JSON.stringify({ chat_id: 5, text: 'scoped', action: 'typing' });
    for (const c of cases) {
      for (const [kind, url, headers] of [
        ['REST', `${h.url}/api/v1/${c.bot}/raw/${c.method}`, json(c.token)],
        ['drop-in', `${h.url}/bot${c.botId}:${c.token}/${c.method}`, json()],
      ] as const) {
        const before = telegramCalls();
        const answer = await call(url, { headers, body: params });
        const made = telegramCalls() - before;
        const label = `${kind} ${c.bot} ${c.method} ${c.token === h.siteToken ? 'site' : 'narrow'}`;
        if (c.allowed) {
          expect({ label, made }).toEqual({ label, made: 1 });
        } else {
          expect({ label, status: answer.status, made }).toEqual({ label, status: 403, made: 0 });
        }
      }
    }
  });

  it('refuses reserved methods on every path, in any case, with a method parameter too', async () => {
    const before = telegramCalls();
    const root = `${h.url}/bot${h.main.id}:${h.siteToken}`;
    const answers: Answer[] = [];
    for (const method of RESERVED_METHODS.flatMap(caseVariants)) {
      answers.push(await call(`${root}/${method}`));
      answers.push(await call(`${root}/${method}`, { headers: json(), body: '{}' }));
      answers.push(
        await call(`${h.url}/api/v1/main-bot/raw/${method}`, {
          headers: json(h.siteToken),
          body: '{"drop_pending_updates":true}',
        }),
      );
    }
    for (const answer of answers) {
      expect(answer.status).toBe(403);
      expect(JSON.parse(answer.text)).toEqual(RESERVED);
    }
    // A method parameter cannot turn an allowed call into a reserved one.
    for (const attempt of [
      call(`${root}/getMe?method=deleteWebhook&drop_pending_updates=true`),
      call(`${root}/getMe`, { headers: json(), body: '{"method":"logOut"}' }),
      call(`${root}/getMe`, {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'method=close',
      }),
      call(`${h.url}/api/v1/main-bot/raw/sendMessage`, {
        headers: json(h.siteToken),
        body: '{"chat_id":1,"text":"x","method":"getUpdates"}',
      }),
      call(`${h.url}/api/v1/main-bot/messages/send`, {
        headers: json(h.siteToken),
        body: '{"chat_id":1,"text":"x","options":{"method":"setWebhook","url":"https://evil.example"}}',
      }),
    ]) {
      expect([400, 403]).toContain((await attempt).status);
    }
    expect(telegramCalls()).toBe(before);
  });

  describe('calls go to the configured API root only', () => {
    let telegram: RecordingReceiver;
    let elsewhere: RecordingReceiver;
    let g: GatewayHarness;

    beforeAll(async () => {
      telegram = await RecordingReceiver.start();
      elsewhere = await RecordingReceiver.start();
      telegram.respondWith({ status: 200, body: { ok: true, result: true } });
      g = await startGatewayHarness({ apiBase: () => telegram.url });
    });
    afterAll(async () => {
      await g.close();
      await telegram.stop();
      await elsewhere.stop();
    });
    beforeEach(() => {
      telegram.clear();
      elsewhere.clear();
    });

    it('keeps downloads under /file/bot<token>/, whatever the path spells', async () => {
      const host = new URL(elsewhere.url).host;
      const attempts = [
        '../getMe',
        '../../bot/getMe',
        '..%2FgetMe',
        '..%2f..%2fgetMe',
        '%2e%2e/getMe',
        '%2E%2E%2FgetMe',
        'photos/..%5C..%5CgetMe',
        'photos\\..\\getMe',
        '/etc/passwd',
        '%2Fetc%2Fpasswd',
        `%2F%2F${host}/x`,
        `..%2F..%2F..%2F${host}`,
        'photos/file.jpg%00.png',
        'photos/./file.jpg',
        'photos//file.jpg',
        'photos/file_1.jpg',
      ];
      // Sent as spelled: a URL parser on the client side would resolve `..` and `\\` first.
      const client = new Client(g.url);
      const statuses: Record<string, number> = {};
      try {
        for (const path of attempts) {
          const res = await client.request({
            method: 'GET',
            path: `/file/bot${g.main.id}:${g.siteToken}/${path}`,
          });
          await res.body.dump();
          statuses[path] = res.statusCode;
        }
      } finally {
        await client.close();
      }
      const prefix = `/file/bot${g.main.token}/`;
      for (const d of telegram.deliveries) {
        expect(d.path.startsWith(prefix)).toBe(true);
        const rest = decodeURIComponent(d.path.slice(prefix.length));
        expect(rest.split('/')).not.toContain('..');
        expect(rest).not.toMatch(/\\|^\/|\0/);
      }
      // Only the plain path went out; every other one was refused here.
      expect(telegram.deliveries.map((d) => d.path)).toEqual([`${prefix}photos/file_1.jpg`]);
      expect(statuses['photos/file_1.jpg']).toBe(200);
      expect(elsewhere.count).toBe(0);
    });

    it('no header, path or parameter sends a call to another host', async () => {
      const other = new URL(elsewhere.url);
      const token = json(g.siteToken);
      const send = JSON.stringify({
        chat_id: 1,
        text: 'x',
        url: elsewhere.url,
        api_base: elsewhere.url,
      });
      await call(`${g.url}/api/v1/main-bot/messages/send`, {
        headers: {
          ...token,
          host: other.host,
          'x-forwarded-host': other.host,
          forwarded: `host=${other.host}`,
        },
        body: send,
      });
      await call(`${g.url}/bot${g.main.id}:${g.siteToken}/sendMessage`, {
        headers: {
          ...json(),
          'x-forwarded-host': other.host,
          'x-original-url': `${elsewhere.url}/x`,
        },
        body: send,
      });
      for (const path of [
        `/bot${g.main.id}:${g.siteToken}@${other.host}/getMe`,
        `/bot${g.main.id}:${g.siteToken}/..%2F..%2F${other.host}%2FgetMe`,
        `/bot${g.main.id}:${g.siteToken}/getMe?url=${encodeURIComponent(elsewhere.url)}`,
        `/bot${g.main.id}:${g.siteToken}/%2F%2F${other.host}%2FgetMe`,
      ]) {
        await call(`${g.url}${path}`);
      }
      // An absolute-form request target naming the other host.
      await new Promise<void>((resolve) => {
        const socket = connect(Number(new URL(g.url).port), '127.0.0.1', () => {
          socket.end(
            `GET ${elsewhere.url}/bot${g.main.id}:${g.siteToken}/getMe HTTP/1.1\r\nHost: ${other.host}\r\nConnection: close\r\n\r\n`,
          );
        });
        socket.on('data', () => undefined);
        socket.on('close', () => resolve());
        socket.on('error', () => resolve());
      });
      expect(elsewhere.count).toBe(0);
      for (const d of telegram.deliveries)
        expect(d.path).toMatch(new RegExp(`^/bot${g.main.token}/`));
      expect(telegram.count).toBeGreaterThanOrEqual(2);
    });
  });
});
