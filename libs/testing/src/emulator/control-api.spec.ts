import { request } from 'undici';
import { RecordingReceiver } from '../receiver/recording-receiver';
import { callApi, resultOf } from '../test/bot-api-client';
import { eventually } from '../eventually';
import { EmulatorControlClient, EmulatorControlError } from './emulator-control-client';
import type { BotIdentity, TelegramMessage, Update } from './emulator.types';
import { TelegramEmulator } from './telegram-emulator';

describe('control API over HTTP (EmulatorControlClient)', () => {
  let emu: TelegramEmulator;
  let control: EmulatorControlClient;
  let bot: BotIdentity;

  beforeAll(async () => {
    emu = await TelegramEmulator.start({ webhookRetryDelayMs: 20 });
    control = new EmulatorControlClient(emu.controlUrl);
  });
  afterAll(() => emu.stop());
  beforeEach(async () => {
    await control.reset();
    bot = await control.addBot({
      token: '110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1',
      username: 'control_bot',
    });
  });

  it('creates bots and finds them by token, id or username', async () => {
    expect(bot).toEqual({
      token: '110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1',
      id: 110201543,
      username: 'control_bot',
      firstName: 'Emulator Bot',
    });
    const generated = await control.addBot();
    expect((await control.bots()).map((b) => b.id)).toEqual([bot.id, generated.id]);
    for (const ref of [bot.token, bot.id, 'control_bot', '@control_bot']) {
      expect(await control.bot(ref)).toEqual(bot);
    }
    const me = await resultOf<{ id: number }>(emu.apiRoot, bot.token, 'getMe');
    expect(me.id).toBe(bot.id);
  });

  it('injects raw updates and built messages and callbacks', async () => {
    const raw = await control.injectUpdate(bot.id, {
      edited_message: { message_id: 3, chat: { id: 1, type: 'private' }, date: 1, text: 'edit' },
    });
    const message = await control.message(bot.id, { chatId: 5, text: '/help me' });
    const press = await control.callback(bot.id, { chatId: 5, userId: 5, data: 'x' });
    const updates = await resultOf<Update[]>(emu.apiRoot, bot.token, 'getUpdates');
    expect(updates).toEqual([raw, message, press]);
    expect((message['message'] as TelegramMessage).entities).toEqual([
      { type: 'bot_command', offset: 0, length: 5 },
    ]);
  });

  it('sets the next update id', async () => {
    await control.setNextUpdateId(bot.id, 777);
    expect((await control.message(bot.id, { chatId: 1, text: 'x' })).update_id).toBe(777);
  });

  it('returns what the bot sent and every call, and waits for calls', async () => {
    const waiting = control.waitForCalls(bot.id, {
      method: 'sendMessage',
      count: 2,
      timeoutMs: 2_000,
    });
    await resultOf(emu.apiRoot, bot.token, 'getMe');
    await resultOf(emu.apiRoot, bot.token, 'sendMessage', { chat_id: 1, text: 'a' });
    await resultOf(emu.apiRoot, bot.token, 'sendMessage', { chat_id: 1, text: 'b' });
    const waited = await waiting;
    expect(waited.map((c) => c.params['text'])).toEqual(['a', 'b']);

    const sent = await control.sent(bot.id, { method: 'sendMessage' });
    expect(sent.map((c) => c.params['text'])).toEqual(['a', 'b']);
    expect((await control.sent(bot.id)).map((c) => c.method)).toEqual([
      'sendMessage',
      'sendMessage',
    ]);
    expect((await control.calls(bot.id)).map((c) => c.method)).toEqual([
      'getMe',
      'sendMessage',
      'sendMessage',
    ]);
    expect(await control.calls(undefined, { method: 'getMe' })).toHaveLength(1);
    const stored = await control.storedMessage(bot.id, 1, 2);
    expect(stored?.text).toBe('b');
    expect(await control.storedMessage(bot.id, 1, 99)).toBeUndefined();
  });

  it('answers 408 when the awaited calls do not come', async () => {
    await expect(
      control.waitForCalls(bot.id, { method: 'sendPhoto', timeoutMs: 50 }),
    ).rejects.toMatchObject({
      status: 408,
    });
  });

  it('forces failures, the shortcuts included', async () => {
    await control.failBlockedByUser(bot.id, 'sendMessage');
    await control.failTooManyRequests(bot.id, 3, 'sendMessage');
    await control.failServerError(bot.id, 503, 'sendMessage');
    await control.fail(bot.id, { method: 'sendMessage', delayMs: 10 });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      statuses.push(
        (await callApi(emu.apiRoot, bot.token, 'sendMessage', { chat_id: 1, text: 'x' })).status,
      );
    }
    expect(statuses).toEqual([403, 429, 503, 200]);

    await control.failUnauthorized(bot.id, 'always');
    expect((await callApi(emu.apiRoot, bot.token, 'getMe')).status).toBe(401);
    expect((await callApi(emu.apiRoot, bot.token, 'getMe')).status).toBe(401);
    await control.clearFailures(bot.id);
    expect((await callApi(emu.apiRoot, bot.token, 'getMe')).status).toBe(200);
  });

  it('shows webhook info', async () => {
    const rx = await RecordingReceiver.start();
    try {
      rx.respondWith({ status: 301, headers: { location: 'https://elsewhere.example/' } });
      await resultOf(emu.apiRoot, bot.token, 'setWebhook', { url: `${rx.url}/tg` });
      await control.message(bot.id, { chatId: 1, text: 'x' });
      await eventually(() => emu.webhookInfo(bot.id).last_error_message !== undefined);
      expect(await control.webhookInfo(bot.id)).toEqual(
        expect.objectContaining({
          url: `${rx.url}/tg`,
          pending_update_count: 1,
          last_error_message: 'Wrong response from the webhook: 301 Moved Permanently',
        }),
      );
    } finally {
      await emu.reset();
      await rx.stop();
    }
  });

  it('answers 404 for an unknown bot and 400 for bad input', async () => {
    await expect(control.sent('nobody_bot')).rejects.toEqual(
      new EmulatorControlError(404, 'unknown bot: nobody_bot'),
    );
    await expect(control.message(bot.id, { chatId: 'one' } as never)).rejects.toMatchObject({
      status: 400,
    });
    await expect(control.fail(bot.id, { drop: false } as never)).rejects.toMatchObject({
      status: 400,
    });
    await expect(
      control.injectUpdate(bot.id, { message: {}, edited_message: {} }),
    ).rejects.toMatchObject({
      status: 400,
    });
    await expect(control.addBot({ token: 'not-a-token' })).rejects.toMatchObject({ status: 400 });
    const raw = await request(`${emu.controlUrl}/bots`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '[1,2',
    });
    expect(raw.statusCode).toBe(400);
    expect(await raw.body.json()).toEqual({ error: "Bad Request: can't parse JSON object" });
  });

  it('never puts a token in an error', async () => {
    const error = await control.sent('123:AAsecretsecret').catch((e: unknown) => e);
    expect(String((error as Error).message)).toBe('unknown bot: 123:***');
  });

  it('describes itself and resets everything', async () => {
    const root = await request(emu.controlUrl);
    expect(await root.body.json()).toEqual({
      apiRoot: emu.apiRoot,
      controlUrl: emu.controlUrl,
      bots: [bot],
    });
    await control.reset();
    expect(await control.bots()).toEqual([]);
    expect(await control.calls()).toEqual([]);
    expect((await callApi(emu.apiRoot, bot.token, 'getMe')).status).toBe(401);
  });
});
