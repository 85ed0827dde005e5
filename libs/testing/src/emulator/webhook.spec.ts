import { setTimeout as sleep } from 'node:timers/promises';
import { RecordingReceiver } from '../receiver/recording-receiver';
import { callApi, resultOf } from '../test/bot-api-client';
import { HoldingServer } from '../test/holding-server';
import { eventually } from '../eventually';
import { closedPort } from '../process/closed-port';
import type { BotIdentity, Update, WebhookInfo } from './emulator.types';
import { TelegramEmulator } from './telegram-emulator';

describe('webhooks', () => {
  let emu: TelegramEmulator;
  let bot: BotIdentity;
  let rx: RecordingReceiver;

  const api = <T>(method: string, params: Record<string, unknown> = {}) =>
    resultOf<T>(emu.apiRoot, bot.token, method, params);
  const info = () => api<WebhookInfo>('getWebhookInfo');

  beforeAll(async () => {
    emu = await TelegramEmulator.start({ webhookRetryDelayMs: 20, webhookMaxRetryDelayMs: 100 });
    rx = await RecordingReceiver.start();
  });
  afterAll(async () => {
    await emu.stop();
    await rx.stop();
  });
  beforeEach(async () => {
    await emu.reset();
    rx.reset();
    bot = emu.addBot();
  });

  it('reports no webhook before one is set', async () => {
    expect(await info()).toEqual({
      url: '',
      has_custom_certificate: false,
      pending_update_count: 0,
    });
  });

  it('sets, describes and deletes a webhook', async () => {
    const set = await callApi(emu.apiRoot, bot.token, 'setWebhook', {
      url: `${rx.url}/hook`,
      max_connections: 7,
      allowed_updates: ['message', 'callback_query'],
    });
    expect(set.body).toEqual({ ok: true, result: true, description: 'Webhook was set' });
    expect(await info()).toEqual({
      url: `${rx.url}/hook`,
      has_custom_certificate: false,
      pending_update_count: 0,
      max_connections: 7,
      allowed_updates: ['message', 'callback_query'],
    });
    const deleted = await callApi(emu.apiRoot, bot.token, 'deleteWebhook');
    expect(deleted.body).toEqual({ ok: true, result: true, description: 'Webhook was deleted' });
    expect((await info()).url).toBe('');
    const again = await callApi(emu.apiRoot, bot.token, 'deleteWebhook');
    expect(again.body.description).toBe('Webhook is already deleted');
  });

  it('pushes updates as JSON with the secret header, and a 2xx confirms them', async () => {
    await api('setWebhook', { url: `${rx.url}/hook`, secret_token: 'Sec_ret-123' });
    const update = emu.message(bot.id, { chatId: 42, text: '/start' });
    const [delivery] = await rx.waitFor(1);
    expect(delivery?.method).toBe('POST');
    expect(delivery?.path).toBe('/hook');
    expect(delivery?.headers['content-type']).toBe('application/json');
    expect(delivery?.headers['x-telegram-bot-api-secret-token']).toBe('Sec_ret-123');
    expect(delivery?.json).toEqual(update);
    await eventually(() => emu.webhookInfo(bot.id).pending_update_count === 0);
    expect(emu.webhookInfo(bot.id).ip_address).toBe('127.0.0.1');
  });

  it('sends no secret header when no secret was set', async () => {
    await api('setWebhook', { url: `${rx.url}/hook` });
    emu.message(bot.id, { chatId: 1, text: 'hi' });
    const [delivery] = await rx.waitFor(1);
    expect(delivery?.headers['x-telegram-bot-api-secret-token']).toBeUndefined();
  });

  it('pushes updates that were pending before the webhook was set', async () => {
    const pending = emu.message(bot.id, { chatId: 5, text: 'waiting' });
    await api('setWebhook', { url: `${rx.url}/hook` });
    const [delivery] = await rx.waitFor(1);
    expect(delivery?.json).toEqual(pending);
  });

  it('sends one chat’s updates one at a time and in order, other chats in parallel', async () => {
    const target = await HoldingServer.start();
    try {
      await api('setWebhook', { url: target.url, max_connections: 10 });
      const a1 = emu.message(bot.id, { chatId: 1, text: 'a1' });
      const a2 = emu.message(bot.id, { chatId: 1, text: 'a2' });
      const b1 = emu.message(bot.id, { chatId: 2, text: 'b1' });
      const a3 = emu.message(bot.id, { chatId: 1, text: 'a3' });
      expect(await target.waitForInFlight(2)).toEqual([a1.update_id, b1.update_id]);
      await sleep(50);
      expect(target.arrivals).toHaveLength(2);

      target.answer(b1.update_id);
      target.answer(a1.update_id);
      expect(await target.waitForInFlight(1)).toEqual([a2.update_id]);
      target.answer(a2.update_id, 500);
      expect(await target.waitForInFlight(1)).toEqual([a2.update_id]);
      target.answer(a2.update_id);
      expect(await target.waitForInFlight(1)).toEqual([a3.update_id]);
      target.answer(a3.update_id);
      await eventually(() => emu.webhookInfo(bot.id).pending_update_count === 0);
      expect(target.arrivals.map((h) => h.body.update_id)).toEqual([
        a1.update_id,
        b1.update_id,
        a2.update_id,
        a2.update_id,
        a3.update_id,
      ]);
    } finally {
      await target.stop();
    }
  });

  it('keeps one user’s callback queries in order, as Telegram queues them per user', async () => {
    const target = await HoldingServer.start();
    try {
      await api('setWebhook', { url: target.url });
      const first = emu.callback(bot.id, { chatId: 1, userId: 9, data: 'a' });
      emu.callback(bot.id, { chatId: 2, userId: 9, data: 'b' });
      expect(await target.waitForInFlight(1)).toEqual([first.update_id]);
      await sleep(50);
      expect(target.arrivals).toHaveLength(1);
    } finally {
      await target.stop();
    }
  });

  it('has at most max_connections requests in flight', async () => {
    const target = await HoldingServer.start();
    try {
      await api('setWebhook', { url: target.url, max_connections: 2 });
      const updates = [1, 2, 3, 4].map((chatId) => emu.message(bot.id, { chatId, text: 'x' }));
      const [u1, u2, u3, u4] = updates.map((u) => u.update_id) as [number, number, number, number];
      expect(await target.waitForInFlight(2)).toEqual([u1, u2]);
      await sleep(100);
      expect(target.arrivals).toHaveLength(2);
      target.answer(u2);
      expect(await target.waitForInFlight(2)).toEqual([u1, u3]);
      target.answer(u1);
      target.answer(u3);
      expect(await target.waitForInFlight(1)).toEqual([u4]);
    } finally {
      await target.stop();
    }
  });

  it('records a redirect as an error without following it, until a good URL is set', async () => {
    rx.respondWith({ status: 301, headers: { location: `${rx.url}/new` } });
    await api('setWebhook', { url: `${rx.url}/old`, secret_token: 'abc' });
    const update = emu.message(bot.id, { chatId: 77, text: 'lost?' });
    await eventually(() => emu.webhookInfo(bot.id).last_error_message !== undefined);

    const failing = await info();
    expect(failing.last_error_message).toBe(
      'Wrong response from the webhook: 301 Moved Permanently',
    );
    expect(failing.pending_update_count).toBe(1);
    expect(Math.abs((failing.last_error_date as number) - Date.now() / 1000)).toBeLessThan(5);
    expect(rx.deliveries.every((d) => d.path === '/old' && d.method === 'POST')).toBe(true);

    const good = await RecordingReceiver.start();
    try {
      await api('setWebhook', { url: `${good.url}/new`, secret_token: 'abc' });
      const [delivery] = await good.waitFor(1);
      expect(delivery?.json).toEqual(update);
      await eventually(() => emu.webhookInfo(bot.id).pending_update_count === 0);
      expect(emu.webhookInfo(bot.id).last_error_message).toBeUndefined();
    } finally {
      await good.stop();
    }
  });

  it('retries after a 5xx and records its status line', async () => {
    rx.respondNext([{ status: 503 }]);
    await api('setWebhook', { url: `${rx.url}/hook` });
    const update = emu.message(bot.id, { chatId: 1, text: 'retry me' });
    const deliveries = await rx.waitFor(2);
    expect(deliveries.map((d) => (d.json as Update).update_id)).toEqual([
      update.update_id,
      update.update_id,
    ]);
    await eventually(() => emu.webhookInfo(bot.id).pending_update_count === 0);
    expect(emu.webhookInfo(bot.id).last_error_message).toBe(
      'Wrong response from the webhook: 503 Service Unavailable',
    );
  });

  it('records a dropped connection and a refused one', async () => {
    rx.respondNext([{ drop: true }]);
    await api('setWebhook', { url: `${rx.url}/hook` });
    emu.message(bot.id, { chatId: 1, text: 'x' });
    await rx.waitFor(2);
    await eventually(() => emu.webhookInfo(bot.id).pending_update_count === 0);
    expect(emu.webhookInfo(bot.id).last_error_message).toBe('Connection reset by peer');

    await api('setWebhook', { url: `http://127.0.0.1:${await closedPort()}/hook` });
    emu.message(bot.id, { chatId: 1, text: 'y' });
    await eventually(() => emu.webhookInfo(bot.id).last_error_message === 'Connection refused');
    expect(emu.webhookInfo(bot.id).pending_update_count).toBe(1);
  });

  it('answers "already set" for the same settings and keeps the recorded error', async () => {
    rx.respondWith({ status: 404 });
    await api('setWebhook', { url: `${rx.url}/hook`, secret_token: 'abc' });
    emu.message(bot.id, { chatId: 1, text: 'x' });
    await eventually(() => emu.webhookInfo(bot.id).last_error_message !== undefined);
    const same = await callApi(emu.apiRoot, bot.token, 'setWebhook', {
      url: `${rx.url}/hook`,
      secret_token: 'abc',
    });
    expect(same.body.description).toBe('Webhook is already set');
    expect(emu.webhookInfo(bot.id).last_error_message).toBe(
      'Wrong response from the webhook: 404 Not Found',
    );
  });

  it('keeps pending updates through deleteWebhook and setWebhook unless told to drop them', async () => {
    const target = await HoldingServer.start();
    try {
      await api('setWebhook', { url: target.url });
      const first = emu.message(bot.id, { chatId: 1, text: 'first' });
      await target.waitForInFlight(1);
      await api('deleteWebhook', { drop_pending_updates: false });
      const second = emu.message(bot.id, { chatId: 2, text: 'second' });
      expect(await api('getUpdates')).toEqual([first, second]);
      expect(target.arrivals).toHaveLength(1);

      await api('setWebhook', { url: `${rx.url}/hook`, drop_pending_updates: false });
      // By update: a retry of an earlier test's bot may still land on the shared receiver.
      for (const update of [first, second]) {
        const delivery = await rx.waitFor((d) => isUpdate(d.json, update.update_id));
        expect(delivery.json).toEqual(update);
      }
    } finally {
      await target.stop();
    }
  });

  it('drops pending updates with drop_pending_updates=true', async () => {
    emu.message(bot.id, { chatId: 1, text: 'doomed' });
    await api('deleteWebhook', { drop_pending_updates: true });
    expect(emu.pendingUpdates(bot.id)).toEqual([]);

    emu.message(bot.id, { chatId: 1, text: 'doomed too' });
    await api('setWebhook', { url: `${rx.url}/hook`, drop_pending_updates: true });
    expect((await info()).pending_update_count).toBe(0);
    const kept = emu.message(bot.id, { chatId: 1, text: 'after' });
    const delivery = await rx.waitFor((d) => isUpdate(d.json, kept.update_id));
    expect(delivery.json).toEqual(kept);
    const doomed = rx.deliveries.filter((d) =>
      ['doomed', 'doomed too'].includes(
        ((d.json as { message?: { text?: string } }).message ?? {}).text ?? '',
      ),
    );
    expect(doomed).toEqual([]);
  });

  it('records every setWebhook and deleteWebhook call with its parameters', async () => {
    await api('setWebhook', {
      url: `${rx.url}/hook`,
      secret_token: 'tok',
      drop_pending_updates: false,
      max_connections: 40,
    });
    await callApi(
      emu.apiRoot,
      bot.token,
      'deleteWebhook',
      { drop_pending_updates: 'false' },
      {
        encoding: 'form',
      },
    );
    const calls = emu
      .calls(bot.id)
      .filter((c) => c.method === 'setWebhook' || c.method === 'deleteWebhook');
    expect(calls.map((c) => [c.method, c.params])).toEqual([
      [
        'setWebhook',
        {
          url: `${rx.url}/hook`,
          secret_token: 'tok',
          drop_pending_updates: false,
          max_connections: 40,
        },
      ],
      ['deleteWebhook', { drop_pending_updates: false }],
    ]);
    expect(calls.some((c) => c.params['drop_pending_updates'] === true)).toBe(false);
  });

  it('runs a method the webhook answers with, as Telegram does', async () => {
    rx.respondWith({ status: 200, body: { method: 'sendMessage', chat_id: 12, text: 'reply' } });
    await api('setWebhook', { url: `${rx.url}/hook` });
    emu.message(bot.id, { chatId: 12, text: 'hi' });
    const [call] = await emu.waitForCalls(bot.id, { method: 'sendMessage' });
    expect(call).toEqual(
      expect.objectContaining({
        via: 'webhook-reply',
        status: 200,
        params: { chat_id: 12, text: 'reply' },
      }),
    );
  });

  it('refuses bad URLs and secrets like Telegram', async () => {
    const badUrl = await callApi(emu.apiRoot, bot.token, 'setWebhook', {
      url: 'ftp://example.com',
    });
    expect(badUrl.status).toBe(400);
    expect(badUrl.body.description).toBe('Bad Request: invalid webhook URL specified');
    const badSecret = await callApi(emu.apiRoot, bot.token, 'setWebhook', {
      url: `${rx.url}/hook`,
      secret_token: 'not base64+/=',
    });
    expect(badSecret.body.description).toBe(
      'Bad Request: secret token contains unallowed characters',
    );
  });
});

/** A port nothing listens on. */

function isUpdate(json: unknown, updateId: number): boolean {
  return (json as { update_id?: unknown } | null)?.update_id === updateId;
}
