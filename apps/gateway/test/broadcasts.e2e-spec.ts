import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { ConfigService } from '@relaygram/config';
import { BROADCAST_MAX_RECIPIENTS, RedisKeys } from '@relaygram/contracts';
import { BroadcastStore, createRedis, type RelaygramRedis } from '@relaygram/queue';
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
const BOT = 'shop-bot';
const BASE = `/api/v1/${BOT}/broadcasts`;

/** The id the gateway gives a broadcast with an Idempotency-Key (as the outbox's ids). */
function keyedId(client: string, key: string): string {
  const hex = createHash('sha256').update(`${client}\n${BOT}\n${key}`).digest('hex');
  const variant = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** A body with `count` chat ids, produced in pieces as undici sends it (chunked). */
function streamedBody(count: number, head = '{"method":"sendMessage","chat_ids":['): Readable {
  async function* pieces() {
    yield head;
    const per = 5_000;
    for (let from = 0; from < count; from += per) {
      const ids = [];
      for (let i = from; i < Math.min(count, from + per); i++)
        ids.push(i % 3 ? 1_000_000 + i : `"-100${i}"`);
      yield `${from === 0 ? '' : ','}${ids.join(',')}`;
    }
    yield '],"params":{"text":"digest"}}';
  }
  return Readable.from(pieces());
}

/**
 * The broadcasts' HTTP side on the gateway app (issue 16): bodies streamed into Redis,
 * scopes, Idempotency-Key, reading and steering, failures. No dispatcher runs here:
 * recipients are claimed and settled through a BroadcastStore as a dispatcher would.
 */
describe('broadcast endpoints of the gateway', () => {
  let emulator: TelegramEmulator;
  let app: GatewayApp;
  let store: BroadcastStore;
  let redis: RelaygramRedis;
  let keys: RedisKeys;
  const site = randomBytes(24).toString('base64url');
  const narrow = randomBytes(24).toString('base64url');
  const plain = randomBytes(24).toString('base64url');
  const other = randomBytes(24).toString('base64url');

  beforeAll(async () => {
    emulator = await TelegramEmulator.start();
    const bot = emulator.addBot();
    app = await bootGateway(
      'gw-broadcasts',
      {
        bots: [{ id: BOT, token_env: 'BROADCAST_BOT_TOKEN', mode: 'polling', default: true }],
        routes: [],
        clients: [
          { name: 'site', token_env: 'BROADCAST_SITE_TOKEN', bots: [BOT], broadcast: true },
          {
            name: 'narrow',
            token_env: 'BROADCAST_NARROW_TOKEN',
            bots: [BOT],
            methods: ['sendMessage'],
            broadcast: true,
          },
          { name: 'plain', token_env: 'BROADCAST_PLAIN_TOKEN', bots: [BOT] },
          { name: 'other', token_env: 'BROADCAST_OTHER_TOKEN', bots: [BOT], broadcast: true },
        ],
      },
      {
        TELEGRAM_API_BASE: emulator.apiRoot,
        BROADCAST_BOT_TOKEN: bot.token,
        BROADCAST_SITE_TOKEN: site,
        BROADCAST_NARROW_TOKEN: narrow,
        BROADCAST_PLAIN_TOKEN: plain,
        BROADCAST_OTHER_TOKEN: other,
      },
    );
    store = app.running.app.get(BroadcastStore);
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
      body?: string | Readable;
      type?: string;
      headers?: Record<string, string>;
    } = {},
  ): Promise<Answer> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token !== undefined) headers['x-service-token'] = options.token;
    if (options.body !== undefined) headers['content-type'] = options.type ?? 'application/json';
    const url = `${app.running.url}${path}`;
    const res = await request(url, { method, headers, body: options.body });
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

  const start = (
    body: string | Readable | object,
    options: { token?: string; path?: string; key?: string } = {},
  ): Promise<Answer> =>
    call('POST', options.path ?? BASE, {
      token: options.token ?? site,
      body: typeof body === 'string' || body instanceof Readable ? body : JSON.stringify(body),
      headers: options.key === undefined ? {} : { 'idempotency-key': options.key },
    });

  const recipients = (id: string) => redis.lrange(keys.broadcastRecipients(BOT, id), 0, -1);
  const message = (chatIds: unknown[], text = 'sale') => ({
    method: 'sendMessage',
    params: { text },
    chat_ids: chatIds,
  });

  it('starts a broadcast whose chat_ids come first, its recipients stored in order', async () => {
    const body =
      '{ "chat_ids": [42, "-1001234567890", "@shop_news", "0042", -7],\n' +
      '  "params": {"text": "Sale \\"today\\" ✓", "parse_mode": "HTML"},\n' +
      '  "method": "sendMessage" }';
    const res = await start(body);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ id: expect.stringMatching(ID), status: 'running', total: 5 });
    const id = res.body.id as string;
    expect(res.headers.location).toBe(`${BASE}/${id}`);
    expect(await recipients(id)).toEqual(['42', '-1001234567890', '@shop_news', '42', '-7']);
    expect(await store.read(BOT, id)).toMatchObject({
      status: 'running',
      client: 'site',
      method: 'sendMessage',
      total: 5,
    });
    expect(JSON.parse((await store.read(BOT, id))?.params ?? '')).toEqual({
      text: 'Sale "today" ✓',
      parse_mode: 'HTML',
    });
    const shown = await call('GET', `${BASE}/${id}`, { token: site });
    expect(shown).toMatchObject({
      status: 200,
      body: { id, status: 'running', method: 'sendMessage', total: 5, pending: 5, sent: 0 },
    });
    expect(shown.body.created_at).toMatch(ISO_TIME);
  });

  it('serves the default bot on /api/v1/broadcasts, naming the bot in Location', async () => {
    const res = await start(message([1, 2]), { path: '/api/v1/broadcasts' });
    expect(res.status).toBe(202);
    expect(res.headers.location).toBe(`${BASE}/${res.body.id}`);
    const read = await call('GET', `/api/v1/broadcasts/${res.body.id}`, { token: site });
    expect(read).toMatchObject({ status: 200, body: { id: res.body.id, total: 2 } });
  });

  it('streams 100,000 recipients into Redis as the body arrives', async () => {
    const res = await start(streamedBody(100_000));
    expect(res).toMatchObject({ status: 202, body: { status: 'running', total: 100_000 } });
    const id = res.body.id as string;
    const list = keys.broadcastRecipients(BOT, id);
    expect(await redis.llen(list)).toBe(100_000);
    expect(await redis.lrange(list, 0, 2)).toEqual(['-1000', '1000001', '1000002']);
    expect(await redis.lindex(list, 99_999)).toBe('-10099999');
  });

  it.each<[string, string, string]>([
    [
      'JSON cut short',
      '{"method":"sendMessage","chat_ids":[1,2',
      'the body is not a broadcast: the body ends at byte 39, before its JSON object does',
    ],
    [
      'a body that is no object',
      '[1, 2]',
      "the body is not a broadcast: the body must be a JSON object: expected '{', found '[' (at byte 0)",
    ],
    [
      'an unknown field',
      '{"method":"sendMessage","priority":1}',
      'the body is not a broadcast: unknown field "priority": the body\'s fields are chat_ids, method, params (at byte 24)',
    ],
    [
      'a chat id that is no integer',
      '{"chat_ids":[1, 1.5]}',
      'chat_ids[1] (at byte 16) must be an integer, a numeric string or an @channelusername',
    ],
    [
      'a chat id that is no chat',
      '{"chat_ids":[1, "shop_news"]}',
      'chat_ids[1] (at byte 16) must be an integer, a numeric string or an @channelusername',
    ],
    [
      'a chat id that is an object',
      '{"chat_ids":[{"id":1}]}',
      "the body is not a broadcast: chat_ids[0] must be a number or a string, found '{' (at byte 13)",
    ],
    [
      'no method',
      '{"params":{"text":"x"},"chat_ids":[1]}',
      'method is required: the Bot API method to call, e.g. "sendMessage"',
    ],
    [
      'no params',
      '{"method":"sendMessage","chat_ids":[1]}',
      "params is required: params must be a JSON object of the method's Bot API parameters, without chat_id (file_id or URL for media)",
    ],
    [
      'no chat_ids',
      '{"method":"sendMessage","params":{}}',
      'chat_ids is required: a list of 1 to 1000000 chat ids',
    ],
    [
      'an empty chat_ids',
      '{"method":"sendMessage","params":{},"chat_ids":[]}',
      'chat_ids is empty: a broadcast needs 1 to 1000000',
    ],
    [
      'chat_id in params',
      '{"chat_ids":[1],"method":"sendMessage","params":{"chat_id":5,"text":"x"}}',
      'chat_id goes in chat_ids: params are the same for every recipient',
    ],
    [
      'params that are no object',
      '{"params":"text=x","chat_ids":[1],"method":"sendMessage"}',
      "params must be a JSON object of the method's Bot API parameters, without chat_id (file_id or URL for media)",
    ],
    [
      'params that are no JSON',
      '{"params":{"a":tru},"chat_ids":[1],"method":"sendMessage"}',
      'params (at byte 10) is not valid JSON',
    ],
    [
      'a method name that is none',
      '{"method":"send_message","params":{},"chat_ids":[1]}',
      'invalid Bot API method name: it must match ^[A-Za-z]+$',
    ],
    [
      'an edit',
      '{"method":"editMessageText","params":{"text":"x"},"chat_ids":[1]}',
      'editMessageText does not send a message to a chat: a broadcast takes sendMessage, copyMessage, forwardMessage or another send method but sendChatAction',
    ],
    [
      'sendChatAction',
      '{"method":"sendChatAction","params":{"action":"typing"},"chat_ids":[1]}',
      'sendChatAction does not send a message to a chat: a broadcast takes sendMessage, copyMessage, forwardMessage or another send method but sendChatAction',
    ],
    [
      'a method parameter naming another method',
      '{"method":"sendMessage","params":{"method":"getMe"},"chat_ids":[1]}',
      'a "method" parameter may only repeat the method of the broadcast',
    ],
  ])('refuses %s with 400 and keeps nothing of it', async (_name, body, error) => {
    const key = `refused-${randomUUID()}`;
    const res = await start(body, { key });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual(
      error.endsWith('valid JSON') ? expect.stringContaining(error) : error,
    );
    expect(await store.read(BOT, keyedId('site', key))).toBeUndefined();
    // Discarded: the key is free for a body that is right.
    const again = await start(message([9]), { key });
    expect(again).toMatchObject({ status: 202, body: { id: keyedId('site', key), total: 1 } });
    expect(again.headers['idempotent-replayed']).toBeUndefined();
  });

  it('refuses more than 1,000,000 recipients, a missing body, a form and a bad key', async () => {
    const key = `too-many-${randomUUID()}`;
    const tooMany = await start(streamedBody(BROADCAST_MAX_RECIPIENTS + 1), { key });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error).toMatch(/^chat_ids has more than 1000000 entries \(at byte \d+\)$/);
    expect(await store.read(BOT, keyedId('site', key))).toBeUndefined();

    const none = await call('POST', BASE, { token: site });
    expect(none).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/^the body must be a JSON object/) },
    });
    const form = await call('POST', BASE, {
      token: site,
      body: 'method=sendMessage',
      type: 'application/x-www-form-urlencoded',
    });
    expect(form).toMatchObject({
      status: 415,
      body: { error: 'unsupported content type: broadcasts take application/json' },
    });
    const badKey = await call('POST', BASE, {
      token: site,
      body: JSON.stringify(message([1])),
      headers: { 'idempotency-key': 'é' },
    });
    expect(badKey).toMatchObject({
      status: 400,
      body: { error: 'the Idempotency-Key header must be 1-255 printable ASCII characters' },
    });
  });

  it('needs broadcast: true, the method in scope and no reserved method (403)', async () => {
    const notAllowed = await start(message([1]), { token: plain });
    expect(notAllowed).toMatchObject({
      status: 403,
      body: {
        error:
          'forbidden: this client may not start or steer broadcasts (its config needs broadcast: true)',
      },
    });
    const outOfScope = await start(
      { chat_ids: [1, 2], method: 'sendPhoto', params: { photo: 'AgAD-file-id' } },
      { token: narrow },
    );
    expect(outOfScope).toMatchObject({
      status: 403,
      body: { error: 'forbidden: this client may not call sendPhoto' },
    });
    const reserved = await start({ method: 'setWebhook', params: {}, chat_ids: [1] });
    expect(reserved).toMatchObject({
      status: 403,
      body: { ok: false, error_code: 403, description: 'Forbidden: reserved by the gateway' },
    });
    const inScope = await start(message([1, 2]), { token: narrow });
    expect(inScope.status).toBe(202);
    expect(await call('GET', `${BASE}/${inScope.body.id}`, {})).toMatchObject({
      status: 401,
      body: { error: 'unauthorized' },
    });
  });

  it('gives a repeat of an Idempotency-Key the same broadcast, adding no recipient', async () => {
    const key = `digest-${randomUUID()}`;
    const first = await start(message([1, 2, 3]), { key });
    expect(first).toMatchObject({
      status: 202,
      body: { id: keyedId('site', key), status: 'running', total: 3 },
    });
    const id = first.body.id as string;
    // The first body wins: the repeat's is not compared, nor stored.
    const again = await start(message([4, 5, 6, 7], 'other'), { key });
    expect(again).toMatchObject({ status: 202, body: { id, status: 'running', total: 3 } });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers.location).toBe(first.headers.location);
    expect(await recipients(id)).toEqual(['1', '2', '3']);
    // Paused since, the repeat says so.
    await call('POST', `${BASE}/${id}/pause`, { token: site });
    expect((await start(message([8]), { key })).body).toEqual({ id, status: 'paused', total: 3 });
    // The same key from another client names a broadcast of its own.
    const theirs = await start(message([8]), { key, token: other });
    expect(theirs.status).toBe(202);
    expect(theirs.body.id).not.toBe(id);
  });

  it('answers 409 while the broadcast of a key is still being stored', async () => {
    const key = `loading-${randomUUID()}`;
    const id = keyedId('site', key);
    expect(await store.create({ bot: BOT, client: 'site', id, upload: randomUUID() })).toBe(
      'created',
    );
    const res = await start(message([1]), { key });
    expect(res).toMatchObject({
      status: 409,
      body: { error: 'a broadcast with this Idempotency-Key is still being created' },
    });
    expect(res.headers['retry-after']).toBe('1');
    expect(await store.read(BOT, id)).toMatchObject({ status: 'loading', total: 0 });
  });

  it("lists the client's broadcasts, newest first, with limit and offset", async () => {
    const mine: string[] = [];
    for (const chat of [11, 12, 13]) mine.push((await start(message([chat]))).body.id as string);
    const theirs = (await start(message([14]), { token: other })).body.id as string;
    const page = await call('GET', `${BASE}?limit=2`, { token: site });
    expect(page).toMatchObject({ status: 200, body: { offset: 0, limit: 2 } });
    const ids = (page.body.items as Array<{ id: string }>).map((item) => item.id);
    expect(ids).toEqual([mine[2], mine[1]]);
    const next = await call('GET', `/api/v1/broadcasts?limit=1&offset=2`, { token: site });
    expect((next.body.items as Array<{ id: string }>).map((item) => item.id)).toEqual([mine[0]]);
    const all = await call('GET', `${BASE}?limit=200`, { token: site });
    const allIds = (all.body.items as Array<{ id: string; status: string }>).map((item) => item.id);
    expect(allIds).not.toContain(theirs);
    expect(allIds.slice(0, 3)).toEqual([...mine].reverse());
    const otherIds = (await call('GET', BASE, { token: other })).body.items as Array<{
      id: string;
    }>;
    expect(otherIds.map((item) => item.id)).toEqual(expect.arrayContaining([theirs]));
    expect(otherIds.map((item) => item.id)).not.toContain(mine[0]);
    for (const query of ['limit=0', 'limit=201', 'limit=x', 'offset=-1']) {
      const bad = await call('GET', `${BASE}?${query}`, { token: site });
      expect(bad.status).toBe(400);
    }
  });

  it('pauses, resumes and cancels, answering 409 naming the status otherwise', async () => {
    const id = (await start(message([21, 22, 23]))).body.id as string;
    const control = (action: string, token = site) =>
      call('POST', `${BASE}/${id}/${action}`, { token });
    expect(await control('pause')).toMatchObject({
      status: 200,
      body: { id, status: 'paused', pending: 3 },
    });
    expect(await control('pause')).toMatchObject({
      status: 409,
      body: { error: 'the broadcast is paused: it cannot be paused' },
    });
    expect(await control('resume')).toMatchObject({ status: 200, body: { status: 'running' } });
    // Paused by a dispatcher for a refused token: the client reads why, until resumed.
    const why = "Telegram refused the bot's token (401 Unauthorized): fix it, then resume.";
    await store.control(BOT, id, 'pause', Date.now(), why);
    expect(await call('GET', `${BASE}/${id}`, { token: site })).toMatchObject({
      status: 200,
      body: { status: 'paused', paused_reason: why },
    });
    const resumed = await control('resume');
    expect(resumed).toMatchObject({ status: 200, body: { status: 'running' } });
    expect(resumed.body).not.toHaveProperty('paused_reason');
    expect(await control('resume')).toMatchObject({
      status: 409,
      body: { error: 'the broadcast is running: it cannot be resumed' },
    });
    const cancelled = await control('cancel');
    expect(cancelled).toMatchObject({
      status: 200,
      body: { status: 'cancelled', finished_at: expect.stringMatching(ISO_TIME) },
    });
    expect(await control('cancel')).toMatchObject({
      status: 409,
      body: { error: 'the broadcast is cancelled: it cannot be cancelled' },
    });
    expect(await control('pause')).toMatchObject({
      status: 409,
      body: { error: 'the broadcast is cancelled: it cannot be paused' },
    });
    expect(await control('resume', plain)).toMatchObject({ status: 403 });
    // A broadcast that ended by itself.
    const done = (await start(message([31]))).body.id as string;
    const claim = await store.claim(BOT, done, 10);
    expect(claim.status).toBe('running');
    await store.settle(BOT, done, [{ index: 0, outcome: 'sent' }]);
    expect(await call('POST', `${BASE}/${done}/pause`, { token: site })).toMatchObject({
      status: 409,
      body: { error: 'the broadcast is done: it cannot be paused' },
    });
  });

  it('lists the recipients that failed, by reason, in pages', async () => {
    const id = (await start(message([41, 42, 43, 44, 45]))).body.id as string;
    const claim = await store.claim(BOT, id, 10);
    expect(claim.status === 'running' && claim.recipients.map((r) => r.chatId)).toEqual([
      '41',
      '42',
      '43',
      '44',
      '45',
    ]);
    const blocked = {
      outcome: 'blocked' as const,
      errorCode: 403,
      description: 'Forbidden: bot was blocked by the user',
    };
    await store.settle(BOT, id, [
      { index: 0, outcome: 'sent' },
      { index: 1, chatId: '42', ...blocked },
      {
        index: 2,
        outcome: 'failed',
        chatId: '43',
        errorCode: 400,
        description: 'Bad Request: chat not found',
      },
      { index: 3, chatId: '44', ...blocked },
      {
        index: 4,
        outcome: 'failed',
        chatId: '45',
        description: 'out of attempts: 502 Bad Gateway',
      },
    ]);
    const failures = (query: string) =>
      call('GET', `${BASE}/${id}/failures?${query}`, { token: site });
    expect(await failures('reason=blocked')).toMatchObject({
      status: 200,
      body: {
        reason: 'blocked',
        total: 2,
        offset: 0,
        items: [
          { chat_id: '42', error_code: 403, description: 'Forbidden: bot was blocked by the user' },
          { chat_id: '44', error_code: 403, description: 'Forbidden: bot was blocked by the user' },
        ],
      },
    });
    expect((await failures('reason=blocked&offset=1&limit=1')).body).toEqual({
      reason: 'blocked',
      total: 2,
      offset: 1,
      items: [
        { chat_id: '44', error_code: 403, description: 'Forbidden: bot was blocked by the user' },
      ],
    });
    expect((await failures('reason=failed')).body.items).toEqual([
      { chat_id: '43', error_code: 400, description: 'Bad Request: chat not found' },
      { chat_id: '45', description: 'out of attempts: 502 Bad Gateway' },
    ]);
    expect(await failures('')).toMatchObject({
      status: 400,
      body: { error: 'reason is required: blocked or failed' },
    });
    expect(await failures('reason=kicked')).toMatchObject({
      status: 400,
      body: { error: 'reason must be blocked or failed' },
    });
    expect(await failures('reason=failed&limit=1001')).toMatchObject({
      status: 400,
      body: { error: 'limit must be an integer from 1 to 1000' },
    });
    expect((await call('GET', `${BASE}/${id}`, { token: site })).body).toMatchObject({
      status: 'done',
      total: 5,
      sent: 1,
      blocked: 2,
      failed: 2,
      pending: 0,
    });
  });

  it("answers another client's broadcast, an unknown id and a malformed one alike: 404", async () => {
    const id = (await start(message([51]))).body.id as string;
    const notFound = { status: 404, body: { error: 'no broadcast with this id' } };
    for (const path of [`${BASE}/${id}`, `${BASE}/${id}/failures?reason=blocked`]) {
      expect(await call('GET', path, { token: other })).toMatchObject(notFound);
    }
    for (const action of ['pause', 'resume', 'cancel']) {
      expect(await call('POST', `${BASE}/${id}/${action}`, { token: other })).toMatchObject(
        notFound,
      );
    }
    expect(await call('GET', `${BASE}/${randomUUID()}`, { token: site })).toMatchObject(notFound);
    expect(await call('GET', `${BASE}/not-an-id`, { token: site })).toMatchObject(notFound);
    expect((await store.read(BOT, id))?.status).toBe('running');
  });
});
