import { randomBytes, randomUUID } from 'node:crypto';
import { ConfigService } from '@relaygram/config';
import { OUTBOX_ROUTE, RedisKeys } from '@relaygram/contracts';
import {
  createRedis,
  decodeEntry,
  outboxLane,
  OutboxStore,
  type DeliveryEntry,
  type RelaygramRedis,
} from '@relaygram/queue';
import { expectDocumentedAnswer, redisUrl, TelegramEmulator } from '@relaygram/testing';
import { request } from 'undici';
import { bootGateway, type GatewayApp } from './support/gateway-app';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/**
 * The outbox's HTTP side on the gateway app (issue 16): a send handed over is durable in
 * Redis (its record and its chat's lane entry) and readable by its client. No
 * dispatcher runs here, so every send stays queued.
 */
describe('outbox endpoints of the gateway', () => {
  let emulator: TelegramEmulator;
  let app: GatewayApp;
  let outbox: OutboxStore;
  let redis: RelaygramRedis;
  let keys: RedisKeys;
  let botToken: string;
  const site = randomBytes(24).toString('base64url');
  const narrow = randomBytes(24).toString('base64url');
  const other = randomBytes(24).toString('base64url');
  let chats = 600;
  /** Each test sends to chats of its own, so each lane holds only its sends. */
  const newChat = () => ++chats;

  beforeAll(async () => {
    emulator = await TelegramEmulator.start();
    const bot = emulator.addBot();
    botToken = bot.token;
    app = await bootGateway(
      'gw-outbox',
      {
        bots: [{ id: 'shop-bot', token_env: 'OUTBOX_BOT_TOKEN', mode: 'polling', default: true }],
        routes: [],
        clients: [
          { name: 'site', token_env: 'OUTBOX_SITE_TOKEN', bots: ['shop-bot'] },
          {
            name: 'narrow',
            token_env: 'OUTBOX_NARROW_TOKEN',
            bots: ['shop-bot'],
            methods: ['sendMessage'],
          },
          { name: 'other', token_env: 'OUTBOX_OTHER_TOKEN', bots: ['shop-bot'] },
        ],
      },
      {
        TELEGRAM_API_BASE: emulator.apiRoot,
        OUTBOX_BOT_TOKEN: bot.token,
        OUTBOX_SITE_TOKEN: site,
        OUTBOX_NARROW_TOKEN: narrow,
        OUTBOX_OTHER_TOKEN: other,
      },
    );
    outbox = app.running.app.get(OutboxStore);
    keys = new RedisKeys(app.running.app.get(ConfigService).config.redis.prefix);
    redis = createRedis(redisUrl());
  });
  afterAll(async () => {
    await redis?.quit();
    await app?.close();
    await emulator?.stop();
  });

  /** A REST call; its answer must match the app's OpenAPI document. */
  async function call(
    method: 'GET' | 'POST',
    path: string,
    options: {
      token?: string;
      body?: unknown;
      text?: { type: string; body: string };
      headers?: Record<string, string>;
    } = {},
  ): Promise<Answer> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token !== undefined) headers['x-service-token'] = options.token;
    let body: string | undefined;
    if (options.text) {
      headers['content-type'] = options.text.type;
      body = options.text.body;
    } else if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    const url = `${app.running.url}${path}`;
    const res = await request(url, { method, headers, body });
    const parsed = (await res.body.json()) as Record<string, unknown>;
    const type = res.headers['content-type'];
    await expectDocumentedAnswer({
      method,
      url,
      status: res.statusCode,
      contentType: typeof type === 'string' ? type : undefined,
      body: parsed,
    });
    return { status: res.statusCode, headers: res.headers, body: parsed };
  }

  const send = (
    body: unknown,
    options: { token?: string; path?: string; key?: string } = {},
  ): Promise<Answer> =>
    call('POST', options.path ?? '/api/v1/shop-bot/outbox', {
      token: options.token ?? site,
      body,
      headers: options.key === undefined ? {} : { 'idempotency-key': options.key },
    });

  async function laneEntries(chat: number | string): Promise<DeliveryEntry[]> {
    const raw = await redis.lrangeBuffer(keys.lane(outboxLane('shop-bot', chat)), 0, -1);
    return raw.map(decodeEntry);
  }

  it('answers 202 with the id and Location once the record and the lane entry are in Redis', async () => {
    const chat = newChat();
    const params = { chat_id: chat, text: 'order 48213 shipped', parse_mode: 'HTML' };
    const res = await send({ method: 'sendMessage', params });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ id: expect.stringMatching(ID), status: 'queued' });
    const id = res.body.id as string;
    expect(res.headers.location).toBe(`/api/v1/shop-bot/outbox/${id}`);

    expect(await outbox.read('shop-bot', id)).toMatchObject({
      id,
      bot: 'shop-bot',
      status: 'queued',
      client: 'site',
      method: 'sendMessage',
      chat: String(chat),
      attempts: 0,
    });
    expect(await redis.hget(keys.outboxSend('shop-bot', id), 'status')).toBe('queued');
    const entries = await laneEntries(chat);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ deliveryId: id, bot: 'shop-bot', route: OUTBOX_ROUTE });
    expect(JSON.parse(entries[0]?.body.toString('utf8') ?? '')).toEqual({
      method: 'sendMessage',
      params,
    });
  });

  it('keeps the sends to one chat in their order, a numeric chat string in its number lane', async () => {
    const chat = newChat();
    const ids: string[] = [];
    for (const chatId of [chat, String(chat), chat]) {
      const res = await send({ method: 'sendMessage', params: { chat_id: chatId, text: 'x' } });
      expect(res.status).toBe(202);
      ids.push(res.body.id as string);
    }
    expect((await laneEntries(chat)).map((e) => e.deliveryId)).toEqual(ids);
  });

  it('shows a queued send to its client', async () => {
    const chat = newChat();
    const created = await send({ method: 'sendMessage', params: { chat_id: chat, text: 'hi' } });
    const id = created.body.id as string;
    const res = await call('GET', `/api/v1/shop-bot/outbox/${id}`, { token: site });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id,
      status: 'queued',
      method: 'sendMessage',
      chat_id: chat,
      attempts: 0,
      created_at: expect.stringMatching(ISO_TIME),
      updated_at: expect.stringMatching(ISO_TIME),
    });
    expect(res.body.updated_at).toBe(res.body.created_at);
  });

  it('serves the default bot on /api/v1/outbox, naming the bot in Location', async () => {
    const res = await send(
      { method: 'sendMessage', params: { chat_id: '@shop_news', text: 'digest' } },
      { path: '/api/v1/outbox' },
    );
    expect(res.status).toBe(202);
    const id = res.body.id as string;
    expect(res.headers.location).toBe(`/api/v1/shop-bot/outbox/${id}`);
    const read = await call('GET', `/api/v1/outbox/${id}`, { token: site });
    expect(read).toMatchObject({ status: 200, body: { id, chat_id: '@shop_news' } });
    expect((await laneEntries('@shop_news')).map((e) => e.deliveryId)).toContain(id);
  });

  it("answers another client's send, an unknown id and a malformed one alike: 404", async () => {
    const created = await send({
      method: 'sendMessage',
      params: { chat_id: newChat(), text: 'mine' },
    });
    const id = created.body.id as string;
    const notFound = { status: 404, body: { error: 'no outbox send with this id' } };
    expect(await call('GET', `/api/v1/shop-bot/outbox/${id}`, { token: other })).toMatchObject(
      notFound,
    );
    expect(
      await call('GET', `/api/v1/shop-bot/outbox/${randomUUID()}`, { token: site }),
    ).toMatchObject(notFound);
    expect(await call('GET', '/api/v1/shop-bot/outbox/not-an-id', { token: site })).toMatchObject(
      notFound,
    );
    expect(await call('GET', `/api/v1/shop-bot/outbox/${id}`, {})).toMatchObject({
      status: 401,
      body: { error: 'unauthorized' },
    });
  });

  it.each<[string, unknown, string]>([
    [
      'a body that is no object',
      [1, 2],
      'the body must be a JSON object: {"method": ..., "params": {...}}',
    ],
    [
      'an unknown field',
      { method: 'sendMessage', params: { chat_id: 1 }, priority: 'high' },
      'priority is not a field of an outbox send (method, params, callback)',
    ],
    [
      'no method',
      { params: { chat_id: 1, text: 'x' } },
      'method is required: the Bot API method to call, e.g. "sendMessage"',
    ],
    [
      'a method name that is none',
      { method: 'send_message', params: { chat_id: 1 } },
      'invalid Bot API method name: it must match ^[A-Za-z]+$',
    ],
    [
      'params that are no object',
      { method: 'sendMessage', params: 'chat_id=1' },
      'params must be a JSON object of the Bot API parameters (file_id or URL for media)',
    ],
    [
      'no params',
      { method: 'sendMessage' },
      'params must be a JSON object of the Bot API parameters (file_id or URL for media)',
    ],
    [
      'no chat_id',
      { method: 'sendMessage', params: { text: 'x' } },
      'params.chat_id is required: outbox sends are ordered per chat',
    ],
    [
      'an empty chat_id',
      { method: 'sendMessage', params: { chat_id: '', text: 'x' } },
      'params.chat_id must be an integer, a numeric string or an @channelusername',
    ],
    [
      'a chat_id that is no integer',
      { method: 'sendMessage', params: { chat_id: 1.5, text: 'x' } },
      'params.chat_id must be an integer, a numeric string or an @channelusername',
    ],
    [
      'a method parameter naming another method',
      { method: 'sendMessage', params: { chat_id: 1, method: 'getUpdates' } },
      'a "method" parameter may only repeat the method of the send',
    ],
    [
      'callback: true',
      { method: 'sendMessage', params: { chat_id: 1, text: 'x' }, callback: true },
      "callback is not available yet: outbox callbacks (the client's callback_url) are not built; read the status with GET .../outbox/:id",
    ],
  ])('refuses %s with 400', async (_name, body, error) => {
    const res = await send(body);
    expect(res).toMatchObject({ status: 400, body: { error } });
  });

  it('refuses a form or a missing JSON body, and queues nothing for a refused send', async () => {
    const form = await call('POST', '/api/v1/shop-bot/outbox', {
      token: site,
      text: { type: 'application/x-www-form-urlencoded', body: 'method=sendMessage' },
    });
    expect(form).toMatchObject({
      status: 415,
      body: { error: 'unsupported content type: the outbox takes application/json' },
    });
    const empty = await call('POST', '/api/v1/shop-bot/outbox', { token: site });
    expect(empty.status).toBe(400);
    const chat = newChat();
    await send({ method: 'sendMessage', params: { chat_id: chat, text: 'x' }, callback: true });
    expect(await laneEntries(chat)).toEqual([]);
  });

  it("refuses a reserved method and one outside the client's methods with 403", async () => {
    const reserved = await send({ method: 'setWebhook', params: { chat_id: 1, url: 'x' } });
    expect(reserved).toMatchObject({
      status: 403,
      body: { ok: false, error_code: 403, description: 'Forbidden: reserved by the gateway' },
    });
    const outOfScope = await send(
      { method: 'sendPhoto', params: { chat_id: 1, photo: 'AgAD-file-id' } },
      { token: narrow },
    );
    expect(outOfScope).toMatchObject({
      status: 403,
      body: { error: 'forbidden: this client may not call sendPhoto' },
    });
    const inScope = await send(
      { method: 'sendMessage', params: { chat_id: newChat(), text: 'narrow' } },
      { token: narrow },
    );
    expect(inScope.status).toBe(202);
  });

  it('honours Idempotency-Key: a repeat gets the same id and queues nothing more', async () => {
    const chat = newChat();
    const key = `outbox-${randomUUID()}`;
    const body = { method: 'sendMessage', params: { chat_id: chat, text: 'once' } };
    const first = await send(body, { key });
    expect(first.status).toBe(202);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await send(
      { params: { text: 'once', chat_id: chat }, method: 'sendMessage' },
      { key },
    );
    expect(again).toMatchObject({ status: 202, body: first.body });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers.location).toBe(first.headers.location);
    expect((await laneEntries(chat)).map((e) => e.deliveryId)).toEqual([first.body.id]);

    const changed = await send(
      { method: 'sendMessage', params: { chat_id: chat, text: 'twice' } },
      { key },
    );
    expect(changed).toMatchObject({
      status: 422,
      body: {
        error:
          'this Idempotency-Key was already used with another request; use a new key for a new request',
      },
    });
    expect(await laneEntries(chat)).toHaveLength(1);
  });

  it('gives a repeat after a lost reply the send already queued, not a second one', async () => {
    const chat = newChat();
    const key = `outbox-${randomUUID()}`;
    const call = { method: 'sendMessage', params: { chat_id: chat, text: 'lost reply' } };
    const first = await send(call, { key });
    expect(first.status).toBe(202);
    // The reply was lost and the key given back (as after a 503): the send is queued
    // while Redis keeps no answer for the key.
    const stored = await redis.keys(`${keys.prefix}:idempotency:*`);
    expect(stored.length).toBeGreaterThan(0);
    await redis.del(...stored);

    const repeat = await send(call, { key });
    expect(repeat).toMatchObject({ status: 202, body: { id: first.body.id, status: 'queued' } });
    expect(repeat.headers['idempotent-replayed']).toBeUndefined();
    expect((await laneEntries(chat)).map((e) => e.deliveryId)).toEqual([first.body.id]);
    // The same key from another client names a send of its own.
    const theirs = await send(call, { key, token: other });
    expect(theirs.status).toBe(202);
    expect(theirs.body.id).not.toBe(first.body.id);
  });

  it("reports the sends waiting as the outbox route's queue depth", async () => {
    await send({ method: 'sendMessage', params: { chat_id: newChat(), text: 'counted' } });
    const queued = Number(await redis.hget(keys.routeStats(OUTBOX_ROUTE), 'queued'));
    expect(queued).toBeGreaterThan(0);
    const text = await (await request(`${app.running.adminUrl}/metrics`)).body.text();
    const depth = /^relaygram_queue_depth\{route="_outbox"[^}]*\} (\d+)$/m.exec(text);
    expect(Number(depth?.[1])).toBe(queued);
  });

  describe('Prefer: respond-async on REST calls', () => {
    const prefer = { prefer: 'respond-async' };

    it('hands a REST row and a raw call to the outbox, answered 202 as the outbox answers', async () => {
      const calls = emulator.calls(botToken).length;
      const chat = newChat();
      const row = await call('POST', '/api/v1/shop-bot/messages/send', {
        token: site,
        body: { chat_id: chat, text: 'later, please' },
        headers: prefer,
      });
      expect(row).toMatchObject({
        status: 202,
        body: { id: expect.stringMatching(ID), status: 'queued' },
      });
      expect(row.headers['preference-applied']).toBe('respond-async');
      expect(row.headers.location).toBe(`/api/v1/shop-bot/outbox/${row.body.id}`);

      const raw = await call('POST', '/api/v1/shop-bot/raw/sendMessage', {
        token: site,
        text: { type: 'application/x-www-form-urlencoded', body: `chat_id=${chat}&text=raw%20too` },
        headers: { prefer: 'wait=10, respond-async' },
      });
      expect(raw).toMatchObject({ status: 202, body: { status: 'queued' } });

      const entries = await laneEntries(chat);
      expect(entries.map((e) => e.deliveryId)).toEqual([row.body.id, raw.body.id]);
      expect(entries.map((e) => JSON.parse(e.body.toString()))).toEqual([
        { method: 'sendMessage', params: { chat_id: chat, text: 'later, please' } },
        { method: 'sendMessage', params: { chat_id: String(chat), text: 'raw too' } },
      ]);
      expect(
        (await call('GET', `/api/v1/shop-bot/outbox/${row.body.id}`, { token: site })).body,
      ).toMatchObject({
        status: 'queued',
        method: 'sendMessage',
        chat_id: chat,
      });
      // Nothing reached Telegram: the dispatcher sends them.
      expect(emulator.calls(botToken)).toHaveLength(calls);
    });

    it('is one send with the outbox under one Idempotency-Key', async () => {
      const chat = newChat();
      const key = `prefer-${randomUUID()}`;
      const params = { chat_id: chat, text: 'once' };
      const viaRaw = await call('POST', '/api/v1/shop-bot/raw/sendMessage', {
        token: site,
        body: params,
        headers: { ...prefer, 'idempotency-key': key },
      });
      const viaOutbox = await send({ method: 'sendMessage', params }, { key });
      expect(viaOutbox).toMatchObject({ status: 202, body: viaRaw.body });
      expect(viaOutbox.headers['idempotent-replayed']).toBe('true');
      expect(await laneEntries(chat)).toHaveLength(1);
    });

    it('refuses a call without chat_id, and an upload', async () => {
      const noChat = await call('POST', '/api/v1/shop-bot/raw/getMe', {
        token: site,
        body: {},
        headers: prefer,
      });
      expect(noChat).toMatchObject({
        status: 400,
        body: { error: 'Prefer: respond-async needs chat_id: the outbox sends in order per chat' },
      });
      const boundary = 'relaygram-test-boundary';
      const upload = await call('POST', '/api/v1/shop-bot/documents/send', {
        token: site,
        text: {
          type: `multipart/form-data; boundary=${boundary}`,
          body:
            `--${boundary}\r\nContent-Disposition: form-data; name="chat_id"\r\n\r\n${newChat()}\r\n` +
            `--${boundary}\r\nContent-Disposition: form-data; name="document"; filename="a.txt"\r\n` +
            `Content-Type: text/plain\r\n\r\nhello\r\n--${boundary}--\r\n`,
        },
        headers: prefer,
      });
      expect(upload.status).toBe(400);
      expect(upload.body.error).toMatch(/^Prefer: respond-async takes JSON or form parameters/);
    });

    it('calls Telegram as before without the preference', async () => {
      const answer = await call('POST', '/api/v1/shop-bot/messages/send', {
        token: site,
        body: { chat_id: newChat(), text: 'now' },
        headers: { prefer: 'return=minimal' },
      });
      expect(answer.status).toBe(200);
      expect(answer.headers['preference-applied']).toBeUndefined();
    });
  });
});
