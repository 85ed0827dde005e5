import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { laneId } from '@relaygram/contracts';
import { PollingAdapter, type IngressOptionsInput } from '@relaygram/ingress';
import { freePort } from '@relaygram/queue';
import {
  RecordingReceiver,
  TelegramEmulator,
  type BotIdentity,
  eventually,
} from '@relaygram/testing';
import { TestInstall } from './support/test-install';

const FAST: IngressOptionsInput = {
  polling: {
    timeoutSeconds: 2,
    leaseTtlMs: 1500,
    networkBackoffMs: 50,
    networkBackoffMaxMs: 200,
    conflictBackoffMs: 1500,
    unauthorizedBackoffMs: 300,
  },
  usernameRetryMs: 100,
};

const ROUTES = [
  { name: 'site', match: { update_types: ['message'] } },
  { name: 'buttons', match: { update_types: ['callback_query'] }, ordering: 'strict' as const },
];

function chatLane(route: string, bot: string, chatId: number): string {
  return laneId(route, bot, { kind: 'chat', chatId });
}

describe('polling adapter', () => {
  let emulator: TelegramEmulator;

  beforeAll(async () => {
    emulator = await TelegramEmulator.start({ webhookRetryDelayMs: 50 });
  });
  afterAll(() => emulator.stop());

  describe('with one polling bot', () => {
    let install: TestInstall;
    let bot: BotIdentity;

    beforeEach(async () => {
      bot = emulator.addBot();
      install = new TestInstall({
        apiBase: emulator.apiRoot,
        bots: [
          {
            id: 'sol',
            mode: 'polling',
            token: bot.token,
            allowedUpdates: ['message', 'callback_query', 'message_reaction'],
          },
        ],
        routes: ROUTES,
      });
      await install.ready();
    });
    afterEach(() => install.cleanup());

    const getUpdatesCalls = () => emulator.calls(bot.id, { method: 'getUpdates' });

    it('polls end to end: every update enqueued once, in order, allowed_updates passed on', async () => {
      const ingress = await install.start({ ingress: FAST });
      const sent = [1, 2, 3].map((n) => emulator.message(bot.id, { chatId: 500, text: `m${n}` }));
      const button = emulator.injectUpdate(bot.id, {
        callback_query: {
          id: 'cb1',
          from: { id: 500, is_bot: false, first_name: 'A' },
          chat_instance: '1',
          data: 'x',
        },
      });
      const lane = chatLane('site', 'sol', 500);
      const entries = await eventually(
        async () => {
          const found = await install.laneEntries(lane);
          return found.length === 3 ? found : undefined;
        },
        { what: 'three messages in the lane' },
      );
      expect(entries.map((e) => e.updateId)).toEqual(sent.map((u) => u.update_id));
      expect(JSON.parse(entries[0].body.toString('utf8'))).toEqual(sent[0]);
      const buttons = await install.laneEntries(laneId('buttons', 'sol', { kind: 'shared' }));
      expect(buttons.map((e) => e.updateId)).toEqual([button.update_id]);

      // Confirmed to Telegram by the next getUpdates, and the offset kept in Redis.
      await eventually(() => emulator.pendingUpdates(bot.id).length === 0, {
        what: 'updates confirmed',
      });
      expect(await install.redis.get(install.keys.pollerOffset('sol'))).toBe(
        String(button.update_id + 1),
      );
      for (const call of getUpdatesCalls()) {
        expect(call.params).toMatchObject({
          allowed_updates: ['message', 'callback_query', 'message_reaction'],
          timeout: 2,
          limit: 100,
        });
      }
      expect(getUpdatesCalls().some((c) => c.params.offset === button.update_id + 1)).toBe(true);

      const health = await ingress.healthz();
      expect(health.body.bots).toEqual([
        expect.objectContaining({ id: 'sol', mode: 'polling', polling: true, healthy: true }),
      ]);
      expect(health.body.polling).toBe(true);
      const logged = ingress.logs.filter((l) => l.update_id === sent[0].update_id);
      expect(logged).toEqual([
        expect.objectContaining({
          bot: 'sol',
          source: 'polling',
          outcome: 'queued',
          deliveries: 1,
        }),
      ]);
    });

    it('loses nothing and enqueues nothing twice when it dies after the enqueue, before the next getUpdates', async () => {
      let crashes = 0;
      const crashing: IngressOptionsInput = {
        ...FAST,
        polling: {
          ...FAST.polling,
          // Long enough that the restart below happens while it waits.
          networkBackoffMs: 60_000,
          networkBackoffMaxMs: 60_000,
          afterBatchEnqueued: () => {
            crashes++;
            throw new Error('simulated crash after the enqueue');
          },
        },
      };
      const first = await install.start({ ingress: crashing });
      const sent = [1, 2].map((n) => emulator.message(bot.id, { chatId: 600, text: `c${n}` }));
      const lane = chatLane('site', 'sol', 600);
      await eventually(() => crashes === 1, { what: 'the crash' });
      expect((await install.laneEntries(lane)).map((e) => e.updateId)).toEqual(
        sent.map((u) => u.update_id),
      );
      // Not confirmed: no offset saved, Telegram still holds the batch.
      expect(await install.redis.get(install.keys.pollerOffset('sol'))).toBeNull();
      expect(emulator.pendingUpdates(bot.id)).toHaveLength(2);
      await first.close();

      const callsBefore = getUpdatesCalls().length;
      const second = await install.start({ ingress: FAST });
      await eventually(
        async () =>
          (await install.redis.get(install.keys.pollerOffset('sol'))) ===
          String(sent[1].update_id + 1),
        { what: 'offset saved after the restart' },
      );
      const reread = getUpdatesCalls()[callsBefore];
      expect(reread.params.offset).toBeUndefined();
      expect(reread.result).toEqual(sent);
      expect((await install.laneEntries(lane)).map((e) => e.updateId)).toEqual(
        sent.map((u) => u.update_id),
      );
      await eventually(() => emulator.pendingUpdates(bot.id).length === 0);
      expect(second.logs.filter((l) => l.msg === 'update received').map((l) => l.outcome)).toEqual([
        'duplicate',
        'duplicate',
      ]);

      // The next poller starts from the saved offset.
      await second.close();
      const third = await install.start({ ingress: FAST });
      const after = getUpdatesCalls().length;
      await eventually(() => getUpdatesCalls().length > after);
      expect(getUpdatesCalls()[after].params.offset).toBe(sent[1].update_id + 1);
      await third.close();
    });

    it('deletes a webhook that blocks getUpdates, keeping its pending updates, at most once a minute', async () => {
      const receiver = await RecordingReceiver.start();
      try {
        receiver.respondWith({ status: 500 });
        await fetch(`${emulator.apiRoot}/bot${bot.token}/setWebhook`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ url: `${receiver.url}/old` }),
        });
        const pending = emulator.message(bot.id, { chatId: 700, text: 'waiting' });
        const ingress = await install.start({ ingress: FAST });
        const lane = chatLane('site', 'sol', 700);
        await eventually(async () => (await install.laneEntries(lane)).length === 1, {
          what: 'the pending update enqueued',
        });
        expect((await install.laneEntries(lane))[0].updateId).toBe(pending.update_id);
        const deletes = emulator.calls(bot.id, { method: 'deleteWebhook' });
        expect(deletes).toHaveLength(1);
        expect(deletes[0].params).toEqual({ drop_pending_updates: false });
        expect(ingress.logs.some((l) => l.level === 'warn' && /webhook is set/.test(l.msg))).toBe(
          true,
        );

        // Set again within the minute: reported, not deleted a second time.
        await fetch(`${emulator.apiRoot}/bot${bot.token}/setWebhook`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ url: `${receiver.url}/again` }),
        });
        const health = await eventually(
          async () => {
            const { body } = await ingress.healthz();
            const sol = body.bots.find((b) => b.id === 'sol');
            return sol?.state === 'conflict' ? sol : undefined;
          },
          { what: 'conflict reported' },
        );
        expect(health.healthy).toBe(false);
        expect(health.problem).toMatch(
          /a webhook is set for this bot \(409 Conflict: can't use getUpdates method while webhook is active/,
        );
        expect(emulator.calls(bot.id, { method: 'deleteWebhook' })).toHaveLength(1);
      } finally {
        await receiver.stop();
      }
    });

    it('backs off and reports, without competing, when something outside the install polls', async () => {
      const ingress = await install.start({
        ingress: {
          ...FAST,
          polling: { ...FAST.polling, timeoutSeconds: 5, conflictBackoffMs: 3000 },
        },
      });
      await eventually(() => getUpdatesCalls().some((c) => c.status === undefined), {
        what: 'a waiting poll',
      });
      // Another program long-polls the same bot: Telegram ends our waiting poll with a 409.
      const outside = fetch(`${emulator.apiRoot}/bot${bot.token}/getUpdates?timeout=2`).then((r) =>
        r.json(),
      );
      const sol = await eventually(
        async () => {
          const { body } = await ingress.healthz();
          const found = body.bots.find((b) => b.id === 'sol');
          return found?.state === 'conflict' ? found : undefined;
        },
        { what: 'conflict reported' },
      );
      expect(sol.healthy).toBe(false);
      expect(sol.polling).toBe(true);
      expect(sol.problem).toMatch(/another getUpdates client polls this bot, outside this install/);
      const callsAtConflict = getUpdatesCalls().length;
      expect(await outside).toMatchObject({ ok: true });
      // Still backing off: no poll of ours displaced the outside one.
      expect(getUpdatesCalls().length).toBe(callsAtConflict);
      expect(getUpdatesCalls().filter((c) => c.status === 409)).toHaveLength(1);
      expect(ingress.get(PollingAdapter).poller('sol')).toMatchObject({
        state: 'conflict',
        polling: true,
      });
      await eventually(async () => (await ingress.healthz()).body.bots[0]?.state === 'polling', {
        timeoutMs: 8000,
        what: 'polling again after the backoff',
      });
    });

    it('reports a refused token, retries slowly, and recovers', async () => {
      emulator.failUnauthorized(bot.id, 'always');
      const ingress = await install.start({ ingress: FAST });
      const sol = await eventually(
        async () => {
          const found = (await ingress.healthz()).body.bots[0];
          return found?.state === 'unauthorized' ? found : undefined;
        },
        { what: 'unauthorized reported' },
      );
      expect(sol).toMatchObject({
        healthy: false,
        problem: 'Telegram refuses the bot token (401 Unauthorized)',
      });
      const metrics = await fetch(`${ingress.running.adminUrl}/metrics`).then((r) => r.text());
      expect(metrics).toMatch(
        /relaygram_poller_state\{[^}]*bot="sol"[^}]*state="unauthorized"[^}]*\} 1/,
      );
      emulator.clearFailures(bot.id);
      await eventually(async () => (await ingress.healthz()).body.bots[0]?.healthy === true, {
        what: 'healthy again',
      });
    });

    it('waits retry_after on a 429', async () => {
      emulator.failTooManyRequests(bot.id, 1, 'getUpdates', 1);
      const ingress = await install.start({ ingress: FAST });
      const sol = await eventually(
        async () => {
          const found = (await ingress.healthz()).body.bots[0];
          return found?.state === 'backoff' ? found : undefined;
        },
        { what: 'backoff reported' },
      );
      expect(sol.problem).toBe(
        'rate limited by Telegram (429 Too Many Requests: retry after 1); waiting 1 s',
      );
      await eventually(() => getUpdatesCalls().length >= 2, { what: 'the next poll' });
      const [limited, next] = getUpdatesCalls();
      expect(limited.status).toBe(429);
      expect(next.time - limited.time).toBeGreaterThanOrEqual(900);
    });
  });

  it('backs off on network errors and says Telegram cannot be reached', async () => {
    const closed = await freePort();
    const install = new TestInstall({
      apiBase: `http://127.0.0.1:${closed}`,
      bots: [{ id: 'far', mode: 'polling', token: emulator.addBot().token }],
      routes: ROUTES,
    });
    try {
      await install.ready();
      const ingress = await install.start({ ingress: FAST });
      const far = await eventually(
        async () => {
          const found = (await ingress.healthz()).body.bots[0];
          return found?.state === 'backoff' ? found : undefined;
        },
        { what: 'backoff reported' },
      );
      expect(far.healthy).toBe(false);
      expect(far.problem).toMatch(
        /^cannot reach Telegram: ECONNREFUSED 127\.0\.0\.1:\d+.*; retrying in \d+ ms$/,
      );
    } finally {
      await install.cleanup();
    }
  });

  it("delivers polled updates with Telegram's bytes, not a re-serialisation", async () => {
    // What a parse and JSON.stringify would change: escapes, a float written 1.0, an
    // integer beyond 2^53, spacing.
    const updates = [
      '{"update_id":7001,"message":{"message_id":1,"date":1,"chat":{"id":900,"type":"private"},"text":"caf\\u00e9 \\"q\\" \\/ \u00e9","price":1.0,"big":98765432109876543210}}',
      '{ "update_id" : 7002 , "message" : { "message_id" : 2 , "date" : 1 , "chat" : { "id" : 900 , "type" : "private" } , "text" : "\u2713 \ud83d\ude00" } }',
    ];
    const token = emulator.addBot().token;
    let served = false;
    const telegram = createServer((req, res) => {
      const method = (req.url ?? '').split('/').pop();
      req.resume();
      const answer = (body: string) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(body);
      };
      if (method === 'getUpdates' && !served) {
        served = true;
        return answer(`{"ok":true,"result":[${updates.join(',\n ')}]}`);
      }
      if (method === 'getUpdates')
        return void setTimeout(() => answer('{"ok":true,"result":[]}'), 200);
      if (method === 'getMe') {
        return answer(
          '{"ok":true,"result":{"id":1,"is_bot":true,"first_name":"B","username":"raw_bot"}}',
        );
      }
      answer('{"ok":true,"result":true}');
    });
    await new Promise<void>((resolve) => telegram.listen(0, '127.0.0.1', resolve));
    const install = new TestInstall({
      apiBase: `http://127.0.0.1:${(telegram.address() as AddressInfo).port}`,
      bots: [{ id: 'raw', mode: 'polling', token }],
      routes: ROUTES,
    });
    try {
      await install.ready();
      await install.start({ ingress: FAST });
      const entries = await eventually(
        async () => {
          const found = await install.laneEntries(chatLane('site', 'raw', 900));
          return found.length === 2 ? found : undefined;
        },
        { what: 'both polled updates in the lane' },
      );
      expect(entries.map((e) => e.body.toString('utf8'))).toEqual(updates);
    } finally {
      await install.cleanup();
      await new Promise((resolve) => telegram.close(resolve));
    }
  });
});
