import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  RecordingReceiver,
  TelegramEmulator,
  type ResponseSpec,
  eventually,
} from '@relaygram/testing';
import type { RunningApp } from '@relaygram/platform';
import { Telegraf } from 'telegraf';
import { request } from 'undici';
import { DispatcherHarness, messageUpdate, sleep } from './support/dispatcher-harness';

describe('dispatcher: webhook replies', () => {
  let h: DispatcherHarness;
  let emulator: TelegramEmulator;
  let receiver: RecordingReceiver;
  let server: http.Server;
  let token: string;
  let app: RunningApp;

  beforeAll(async () => {
    h = await DispatcherHarness.create('replies');
    token = h.bots['bot-a'];
    emulator = await TelegramEmulator.start();
    emulator.addBot({ token, username: 'reply_test_bot' });
    receiver = await RecordingReceiver.start();

    // A Telegraf bot in webhook mode, with Telegraf's default webhookReply: true: its
    // first call of an update, when Telegraf allows it as a reply (sendChatAction,
    // answerCallbackQuery, deleteMessage...), goes back as the body of the webhook answer.
    const bot = new Telegraf(token, { telegram: { apiRoot: emulator.apiRoot } });
    bot.on('message', (ctx) => ctx.sendChatAction('typing'));
    server = http.createServer(bot.webhookCallback('/telegraf'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;

    h.writeConfig(
      `
routes:
  - name: telegraf
    target_url: http://127.0.0.1:${port}/telegraf
    match: { chat_ids: [1] }
  - name: scripted
    target_url: ${receiver.url}/scripted
    match: { chat_ids: [2] }
  - name: quiet
    target_url: ${receiver.url}/quiet
    webhook_reply: false
    match: { chat_ids: [3] }
`,
      { apiBase: emulator.apiRoot },
    );
    app = await h.start();
  });

  afterAll(async () => {
    await h.cleanup();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await receiver.stop();
    await emulator.stop();
  });

  const replyCalls = (method: string) => emulator.calls(token, { method });

  it('calls the method a Telegraf bot answers with, for the bot', async () => {
    await h.enqueue(messageUpdate(10, 1, 'ping'));
    const [call] = await emulator.waitForCalls(token, {
      method: 'sendChatAction',
      timeoutMs: 10_000,
    });
    expect(call.params).toMatchObject({ chat_id: 1, action: 'typing' });
    await eventually(() => h.logs.some((l) => l.msg === 'delivered' && l.update_id === 10));
    // The call was made by the dispatcher from Telegraf's answer, not by Telegraf itself.
    const counted =
      /relaygram_webhook_reply_calls_total\{[^}]*route="telegraf"[^}]*outcome="ok"[^}]*\} 1/;
    await eventually(
      async () => counted.test(await (await request(`${app.adminUrl}/metrics`)).body.text()),
      { what: 'the reply counted as ok' },
    );
  });

  it('refuses reserved methods, whatever their case, and still counts the delivery', async () => {
    for (const [i, method] of [
      'deleteWebhook',
      'DeleteWebhook',
      'getUpdates',
      'LOGOUT',
      'close',
      'send-message',
    ].entries()) {
      receiver.respondNext([{ status: 200, body: { method, drop_pending_updates: true } }]);
      await h.enqueue(messageUpdate(100 + i, 2));
      await eventually(
        () => h.logs.filter((l) => l.msg.startsWith('webhook reply refused')).length === i + 1,
        { what: `${method} refused` },
      );
    }
    for (const method of ['deleteWebhook', 'getUpdates', 'logOut', 'close']) {
      expect(replyCalls(method)).toHaveLength(0);
    }
    expect(h.logs.filter((l) => l.msg === 'delivered' && l.route === 'scripted')).toHaveLength(6);
  });

  it('ignores replies on a route with webhook_reply: false, and bodies without a method', async () => {
    // Routes are drained side by side, in no order between them: answer by update.
    const answers: Record<string, ResponseSpec> = {
      '200': { status: 200, body: { method: 'sendMessage', chat_id: 3, text: 'quiet' } },
      '201': { status: 200, body: { ok: true } },
      '202': { status: 200, body: 'not json' },
    };
    receiver.respondWith(
      (d) => answers[String(d.headers['x-telegram-update-id'])] ?? { status: 204 },
    );
    const seen = receiver.deliveries.length;
    await h.enqueue(messageUpdate(200, 3));
    await h.enqueue(messageUpdate(201, 2));
    await h.enqueue(messageUpdate(202, 2));
    await eventually(() => receiver.deliveries.length >= seen + 3);
    await sleep(300);
    expect(replyCalls('sendMessage').filter((c) => c.params.text === 'quiet')).toHaveLength(0);
    receiver.respondWith(() => ({ status: 204 }));
  });

  it('logs and counts a failed reply without retrying it or the delivery', async () => {
    emulator.failBlockedByUser(token, 'sendMessage', 1);
    receiver.respondNext([
      { status: 200, body: { method: 'sendMessage', chat_id: 2, text: 'blocked' } },
    ]);
    const before = replyCalls('sendMessage').length;
    await h.enqueue(messageUpdate(300, 2));
    await eventually(() =>
      h.logs.some((l) => l.msg === 'webhook reply failed' && l.update_id === 300),
    );
    await sleep(500);
    expect(replyCalls('sendMessage').length - before).toBe(1);
    expect(
      receiver.deliveries.filter((d) => d.headers['x-telegram-update-id'] === '300'),
    ).toHaveLength(1);
    const line = h.logs.find((l) => l.msg === 'webhook reply failed' && l.update_id === 300)!;
    expect(line.error).toContain('Forbidden: bot was blocked by the user');
    expect(JSON.stringify(h.logs)).not.toContain(token.split(':')[1]);
  });
});
