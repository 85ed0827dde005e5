import { randomInt } from 'node:crypto';
import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { laneId } from '@relaygram/contracts';
import { DrainScheduler, LaneReconciler } from '@relaygram/queue';
import { TelegramEmulator, eventually } from '@relaygram/testing';
import {
  TestInstall,
  webhookSecret,
  type IngressInstance,
  type InstallSpec,
} from './support/test-install';

/** A Nest route beside the webhook: ingress must not change how its body is parsed. */
@Controller('echo')
class EchoController {
  @Post()
  @HttpCode(200)
  echo(@Body() body: unknown) {
    return { received: body, kind: Buffer.isBuffer(body) ? 'buffer' : typeof body };
  }
}

const SHOP_SECRET = webhookSecret();
const OTHER_SECRET = webhookSecret();

let nextId = randomInt(1_000_000, 100_000_000);
const newId = () => nextId++;

function message(text: string, options: { chatId?: number; userId?: number; id?: number } = {}) {
  const entities = text.startsWith('/')
    ? [{ type: 'bot_command', offset: 0, length: text.split(' ')[0].length }]
    : undefined;
  return {
    update_id: options.id ?? newId(),
    message: {
      message_id: randomInt(1, 1_000_000),
      from: { id: options.userId ?? 42, is_bot: false, first_name: 'Alice' },
      chat: { id: options.chatId ?? 42, type: 'private', first_name: 'Alice' },
      date: 1_732_874_400,
      text,
      ...(entities ? { entities } : {}),
    },
  };
}

function callbackQuery(data: string, id = newId()) {
  return {
    update_id: id,
    callback_query: {
      id: String(randomInt(1, 1e9)),
      from: { id: 77, is_bot: false, first_name: 'Bob' },
      chat_instance: '-123',
      data,
      message: {
        message_id: 9,
        chat: { id: 77, type: 'private', first_name: 'Bob' },
        date: 1_732_874_400,
        text: 'pick one',
      },
    },
  };
}

describe('webhook adapter', () => {
  let emulator: TelegramEmulator;
  let install: TestInstall;
  let ingress: IngressInstance;
  const shop = () => ({ 'x-telegram-bot-api-secret-token': SHOP_SECRET });

  beforeAll(async () => {
    emulator = await TelegramEmulator.start();
    const shopBot = emulator.addBot({ username: 'thisbot' });
    const learnBot = emulator.addBot({ username: 'learned_bot' });
    const pollBot = emulator.addBot();
    const spec: InstallSpec = {
      apiBase: emulator.apiRoot,
      bots: [
        {
          id: 'shop',
          mode: 'webhook',
          token: shopBot.token,
          username: 'thisbot',
          default: true,
          webhook: { url: 'https://relay.example/webhooks/telegram/shop', secret: SHOP_SECRET },
        },
        {
          id: 'learner',
          mode: 'webhook',
          token: learnBot.token,
          webhook: { url: 'https://relay.example/webhooks/telegram/learner', secret: OTHER_SECRET },
        },
        { id: 'poller', mode: 'polling', token: pollBot.token },
      ],
      routes: [
        { name: 'admin', bots: ['shop', 'learner'], match: { commands: ['/admin'] } },
        {
          name: 'buttons',
          bots: ['shop'],
          match: { update_types: ['callback_query'] },
          ordering: 'strict',
        },
        {
          name: 'buy-buttons',
          bots: ['shop'],
          match: { callback_prefixes: ['buy:'] },
        },
        { name: 'chat', bots: ['shop'], match: { update_types: ['message'] }, ordering: 'none' },
      ],
    };
    install = new TestInstall(spec);
    await install.ready();
    ingress = await install.start({ controllers: [EchoController] });
  });

  afterAll(async () => {
    await install.cleanup();
    await emulator.stop();
  });

  describe('accepted updates', () => {
    it('answers 202 queued with one delivery per route, keeping the body bytes as received', async () => {
      const update = message('/admin now', { chatId: 1001 });
      // Odd spacing and key order: the delivery must carry these bytes, not a re-serialisation.
      const raw = `{ "message" : ${JSON.stringify(update.message)},\n  "update_id":${update.update_id} }`;
      const res = await ingress.post('/webhooks/telegram/shop', raw, shop());
      expect(res.status).toBe(202);
      expect(res.json).toEqual({ status: 'queued', deliveries: 2 });
      expect(res.headers['content-type']).toMatch(/^application\/json/);

      const [admin] = await install.laneEntries(
        laneId('admin', 'shop', { kind: 'chat', chatId: 1001 }),
      );
      expect(admin).toMatchObject({ bot: 'shop', route: 'admin', updateId: update.update_id });
      expect(admin.body.toString('utf8')).toBe(raw);
      // `ordering: none` gives every delivery a lane of its own.
      const chat = await install.deliveriesOf('chat');
      expect(chat.filter((d) => d.updateId === update.update_id)).toHaveLength(1);
      expect(chat.find((d) => d.updateId === update.update_id)?.deliveryId).not.toBe(
        admin.deliveryId,
      );
    });

    it('answers duplicate for an update_id seen before, and enqueues nothing more', async () => {
      const update = message('/admin', { chatId: 1002 });
      const lane = laneId('admin', 'shop', { kind: 'chat', chatId: 1002 });
      expect(
        (await ingress.post('/webhooks/telegram/shop', JSON.stringify(update), shop())).json,
      ).toEqual({
        status: 'queued',
        deliveries: 2,
      });
      const again = await ingress.post('/webhooks/telegram/shop', JSON.stringify(update), shop());
      expect(again.status).toBe(202);
      expect(again.json).toEqual({ status: 'duplicate', deliveries: 0 });
      expect(await install.laneEntries(lane)).toHaveLength(1);
    });

    it('answers ignored when no route matches', async () => {
      const update = { update_id: newId(), poll: { id: 'p1', question: 'Lunch?', options: [] } };
      const res = await ingress.post('/webhooks/telegram/shop', JSON.stringify(update), shop());
      expect(res.status).toBe(202);
      expect(res.json).toEqual({ status: 'ignored', deliveries: 0 });
    });

    it('fans one callback_query out to every matching route', async () => {
      const update = callbackQuery('buy:42');
      const res = await ingress.post('/webhooks/telegram/shop', JSON.stringify(update), shop());
      expect(res.json).toEqual({ status: 'queued', deliveries: 2 });
      const buttons = await install.laneEntries(laneId('buttons', 'shop', { kind: 'shared' }));
      const buy = await install.laneEntries(
        laneId('buy-buttons', 'shop', { kind: 'chat', chatId: 77 }),
      );
      expect(buttons.map((d) => d.updateId)).toContain(update.update_id);
      expect(buy.map((d) => d.updateId)).toEqual([update.update_id]);
      const ids = [...buttons, ...buy]
        .filter((d) => d.updateId === update.update_id)
        .map((d) => d.deliveryId);
      expect(new Set(ids).size).toBe(2);

      const other = callbackQuery('sell:1');
      expect(
        (await ingress.post('/webhooks/telegram/shop', JSON.stringify(other), shop())).json,
      ).toEqual({
        status: 'queued',
        deliveries: 1,
      });
    });

    it('serves the default bot on POST /webhooks/telegram', async () => {
      const update = message('/admin', { chatId: 1003 });
      const res = await ingress.post('/webhooks/telegram', JSON.stringify(update), shop());
      expect(res.status).toBe(202);
      expect(res.json).toEqual({ status: 'queued', deliveries: 2 });
    });

    it('takes any Content-Type, or none, and reads the body as JSON', async () => {
      for (const type of [
        'text/plain',
        'application/octet-stream',
        'application/x-www-form-urlencoded',
      ]) {
        const res = await ingress.post('/webhooks/telegram/shop', JSON.stringify(message('hi')), {
          ...shop(),
          'content-type': type,
        });
        expect(res.json).toEqual({ status: 'queued', deliveries: 1 });
      }
    });

    it('enqueues exactly one set of deliveries for 50 concurrent copies of an update', async () => {
      const update = callbackQuery('buy:50');
      const body = JSON.stringify(update);
      const answers = await Promise.all(
        Array.from({ length: 50 }, () => ingress.post('/webhooks/telegram/shop', body, shop())),
      );
      expect(answers.every((a) => a.status === 202)).toBe(true);
      const statuses = answers.map((a) => (a.json as { status: string }).status);
      expect(statuses.filter((s) => s === 'queued')).toHaveLength(1);
      expect(statuses.filter((s) => s === 'duplicate')).toHaveLength(49);
      const buttons = await install.laneEntries(laneId('buttons', 'shop', { kind: 'shared' }));
      const buy = await install.laneEntries(
        laneId('buy-buttons', 'shop', { kind: 'chat', chatId: 77 }),
      );
      expect(buttons.filter((d) => d.updateId === update.update_id)).toHaveLength(1);
      expect(buy.filter((d) => d.updateId === update.update_id)).toHaveLength(1);
    });

    it('logs one line per update with bot, update_id, source, outcome and deliveries', async () => {
      const update = message('/admin', { chatId: 1004 });
      await ingress.post('/webhooks/telegram/shop', JSON.stringify(update), shop());
      await ingress.post('/webhooks/telegram/shop', JSON.stringify(update), shop());
      const lines = ingress.logs.filter((l) => l.update_id === update.update_id);
      expect(lines).toEqual([
        expect.objectContaining({
          level: 'info',
          bot: 'shop',
          update_id: update.update_id,
          source: 'webhook',
          outcome: 'queued',
          deliveries: 2,
        }),
        expect.objectContaining({ outcome: 'duplicate', deliveries: 0 }),
      ]);
    });
  });

  describe('/cmd@username', () => {
    const route = (chatId: number) => laneId('admin', 'shop', { kind: 'chat', chatId });

    it('matches /admin@thisbot to an /admin route, case-insensitively', async () => {
      for (const [text, chatId] of [
        ['/admin@thisbot', 2001],
        ['/Admin@ThisBot please', 2002],
      ] as const) {
        const res = await ingress.post(
          '/webhooks/telegram/shop',
          JSON.stringify(message(text, { chatId })),
          shop(),
        );
        expect(res.json).toEqual({ status: 'queued', deliveries: 2 });
        expect(await install.laneEntries(route(chatId))).toHaveLength(1);
      }
    });

    it('does not match /admin@otherbot or a command that does not open the text', async () => {
      for (const [text, chatId] of [
        ['/admin@otherbot', 2003],
        ['x /admin', 2004],
      ] as const) {
        const update = message(text, { chatId });
        if (text.startsWith('x')) {
          (update.message as Record<string, unknown>).entities = [
            { type: 'bot_command', offset: 2, length: 6 },
          ];
        }
        const res = await ingress.post('/webhooks/telegram/shop', JSON.stringify(update), shop());
        // Only the catch-all `chat` route takes it.
        expect(res.json).toEqual({ status: 'queued', deliveries: 1 });
        expect(await install.laneEntries(route(chatId))).toHaveLength(0);
      }
    });

    it('learns a username missing from the config from getMe, and shares it through Redis', async () => {
      const learner = { 'x-telegram-bot-api-secret-token': OTHER_SECRET };
      await eventually(
        async () =>
          (await install.redis.hget(install.keys.botState('learner'), 'username')) ===
          'learned_bot',
        { what: 'username learned' },
      );
      const res = await ingress.post(
        '/webhooks/telegram/learner',
        JSON.stringify(message('/admin@learned_bot', { chatId: 2005 })),
        learner,
      );
      expect(res.json).toEqual({ status: 'queued', deliveries: 1 });
      const other = await ingress.post(
        '/webhooks/telegram/learner',
        JSON.stringify(message('/admin@thisbot', { chatId: 2006 })),
        learner,
      );
      expect(other.json).toEqual({ status: 'ignored', deliveries: 0 });
    });
  });

  describe('refused requests', () => {
    const NOT_FOUND = { error: 'not found: no bot in webhook mode has this id' };

    async function expectNothingStoredFor(updateId: number) {
      // The update_id was never marked seen: the same update is accepted afterwards.
      const res = await ingress.post(
        '/webhooks/telegram/shop',
        JSON.stringify({ ...message('/admin', { chatId: 3000 }), update_id: updateId }),
        shop(),
      );
      expect(res.json).toEqual({ status: 'queued', deliveries: 2 });
    }

    it('answers 404 for an unknown bot and for a polling bot, with the same body', async () => {
      const update = message('/admin');
      for (const path of ['/webhooks/telegram/nobody', '/webhooks/telegram/poller']) {
        const res = await ingress.post(path, JSON.stringify(update), shop());
        expect(res.status).toBe(404);
        expect(res.json).toEqual(NOT_FOUND);
      }
      await expectNothingStoredFor(update.update_id);
    });

    it('answers 401 for a wrong secret of the right length and for a missing one', async () => {
      const update = message('/admin');
      const wrong = webhookSecret();
      expect(wrong).toHaveLength(SHOP_SECRET.length);
      const bad = await ingress.post('/webhooks/telegram/shop', JSON.stringify(update), {
        'x-telegram-bot-api-secret-token': wrong,
      });
      expect(bad.status).toBe(401);
      expect(bad.json).toEqual({
        error: 'X-Telegram-Bot-Api-Secret-Token does not match the webhook secret of this bot',
      });
      // Another bot's secret is no better.
      const crossed = await ingress.post('/webhooks/telegram/shop', JSON.stringify(update), {
        'x-telegram-bot-api-secret-token': OTHER_SECRET,
      });
      expect(crossed.status).toBe(401);
      const missing = await ingress.post('/webhooks/telegram/shop', JSON.stringify(update));
      expect(missing.status).toBe(401);
      expect(missing.json).toEqual({ error: 'X-Telegram-Bot-Api-Secret-Token header is missing' });
      await expectNothingStoredFor(update.update_id);
    });

    it('answers 413 for a body over 1 MiB', async () => {
      const update = message('x'.repeat(1024 * 1024));
      const res = await ingress.post('/webhooks/telegram/shop', JSON.stringify(update), shop());
      expect(res.status).toBe(413);
      expect(res.json).toEqual({ error: 'body exceeds 1 MiB' });
      await expectNothingStoredFor(update.update_id);
    });

    it.each([
      ['a string', '"123"', 'update_id must be a number, not string'],
      ['a float', '12.5', 'update_id must be a non-negative integer below 2^53'],
      ['negative', '-3', 'update_id must be a non-negative integer below 2^53'],
      ['beyond 2^53', '9007199254740993', 'update_id must be a non-negative integer below 2^53'],
      ['null', 'null', 'update_id must be a number, not null'],
    ])('answers 400 for update_id as %s', async (_name, value, error) => {
      const body = `{"update_id":${value},"message":{"message_id":1,"chat":{"id":1,"type":"private"},"date":1,"text":"/admin"}}`;
      const res = await ingress.post('/webhooks/telegram/shop', body, shop());
      expect(res.status).toBe(400);
      expect(res.json).toEqual({ error });
    });

    it.each([
      ['update_id missing', '{"message":{"text":"hi"}}', 'update_id is missing'],
      ['not JSON', '{"update_id": 1, "message": ', 'body is not JSON'],
      ['empty', '', 'body is empty: expected a Telegram Update'],
      ['a JSON array', '[{"update_id":1}]', 'body must be a JSON object (a Telegram Update)'],
      ['a JSON string', '"update"', 'body must be a JSON object (a Telegram Update)'],
    ])('answers 400 when the body is %s', async (_name, body, error) => {
      const res = await ingress.post('/webhooks/telegram/shop', body, shop());
      expect(res.status).toBe(400);
      expect(res.json).toEqual({ error });
    });

    it('answers 400, not 415, for a malformed Content-Type', async () => {
      const res = await ingress.post('/webhooks/telegram/shop', JSON.stringify(message('hi')), {
        ...shop(),
        'content-type': 'not a type',
      });
      expect(res.status).toBe(400);
      expect(res.json).toEqual({ error: 'body is not JSON: the Content-Type header is malformed' });
    });

    it('counts refused updates in the metrics and never logs a secret', async () => {
      const metrics = await fetch(`${ingress.running.adminUrl}/metrics`).then((r) => r.text());
      expect(metrics).toMatch(
        /relaygram_updates_received_total\{[^}]*bot="shop"[^}]*source="webhook"[^}]*outcome="rejected"[^}]*\} [1-9]/,
      );
      expect(metrics).toMatch(/outcome="queued"/);
      const everything = JSON.stringify(ingress.logs);
      for (const secret of [SHOP_SECRET, OTHER_SECRET, ...Object.values(install.env)]) {
        expect(everything).not.toContain(secret);
      }
    });
  });

  describe('the rest of the app', () => {
    it('keeps the JSON parsing of other routes: the webhook parser is encapsulated', async () => {
      const parsed = await ingress.post('/echo', '{"a":1}');
      expect(parsed.status).toBe(200);
      expect(parsed.json).toEqual({ received: { a: 1 }, kind: 'object' });
      const unsupported = await ingress.post('/echo', 'a=1', {
        'content-type': 'application/x-relaygram-test',
      });
      expect(unsupported.status).toBe(415);
    });

    it('does not serve GET on the webhook path', async () => {
      const res = await fetch(`${ingress.url}/webhooks/telegram/shop`);
      expect(res.status).toBe(404);
    });
  });

  describe('crash analysis at the enqueue, through HTTP', () => {
    it("leaves neither the dedup mark nor a lane entry when the script fails, and Telegram's retry enqueues", async () => {
      const update = callbackQuery('buy:script-fails');
      const sharedLane = laneId('buttons', 'shop', { kind: 'shared' });
      const buyLane = laneId('buy-buttons', 'shop', { kind: 'chat', chatId: 77 });
      const buyKey = install.keys.lane(buyLane);
      const saved = await install.redis.dumpBuffer(buyKey);
      const before = (await install.laneEntries(sharedLane)).length;
      // A key of the wrong type where the second lane lives: the script must refuse
      // before its first write.
      await install.redis.del(buyKey);
      await install.redis.set(buyKey, 'not a list');
      const failed = await ingress.post('/webhooks/telegram/shop', JSON.stringify(update), shop());
      expect(failed.status).toBe(503);
      expect(failed.headers['retry-after']).toBeUndefined();
      expect(failed.json).toEqual({
        error: 'Redis answered an error: the update was not stored (Telegram retries)',
      });
      expect((await install.laneEntries(sharedLane)).length).toBe(before);

      await install.redis.del(buyKey);
      if (saved) await install.redis.restore(buyKey, 0, saved);
      const retried = await ingress.post('/webhooks/telegram/shop', JSON.stringify(update), shop());
      expect(retried.json).toEqual({ status: 'queued', deliveries: 2 });
    });

    it('gives a lane whose drain job never got created a job through the reconciler', async () => {
      const update = message('/admin', { chatId: 4001 });
      const lane = laneId('admin', 'shop', { kind: 'chat', chatId: 4001 });
      expect(
        (await ingress.post('/webhooks/telegram/shop', JSON.stringify(update), shop())).status,
      ).toBe(202);
      const scheduler = ingress.get(DrainScheduler);
      const queue = scheduler.queue('admin');
      // The job armed for the lane is added right after the answer.
      const armed = async () =>
        Object.entries(await install.redis.hgetall(install.keys.drainJobs('admin')))
          .filter(([, entry]) => entry.startsWith('a'))
          .map(([id]) => id);
      let jobId: string | undefined;
      for (let i = 0; i < 100 && !jobId; i++) {
        for (const id of await armed()) if (await queue.getJob(id)) jobId = id;
        if (!jobId) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(jobId).toBeDefined();
      // The crash: the script ran, the job add did not.
      await (await queue.getJob(jobId!))!.remove();
      expect(await queue.getJob(jobId!)).toBeUndefined();

      const report = await ingress
        .get(LaneReconciler)
        .reconcile(['admin', 'buttons', 'buy-buttons', 'chat'], { armedGraceMs: 0 });
      expect(report).toMatchObject({ jobsDropped: 1 });
      expect(report.restarted).toBeGreaterThanOrEqual(1);
      const [next] = await armed();
      expect(next).not.toBe(jobId);
      expect(await queue.getJob(next)).toBeDefined();
      expect(await install.redis.lrange(install.keys.readyLanes('admin'), 0, -1)).toContain(lane);
      expect(await install.laneEntries(lane)).toHaveLength(1);
    });
  });
});
