import { request } from 'undici';
import { callApi, resultOf, type Encoding } from '../test/bot-api-client';
import { emulatorPerSpec } from '../test/shared-emulator';
import type { BotIdentity, TelegramMessage } from './emulator.types';
import { TelegramEmulator } from './telegram-emulator';

describe('Bot API over HTTP', () => {
  let emu: TelegramEmulator;
  let bot: BotIdentity;

  emulatorPerSpec(
    (started, fresh) => {
      emu = started;
      bot = fresh;
    },
    { username: 'relay_test_bot', firstName: 'Relay' },
  );

  it('gives bots realistic tokens whose numeric part is the id', () => {
    const other = emu.addBot();
    expect(other.token).toMatch(/^\d{10}:AA[A-Za-z0-9_-]{33}$/);
    expect(other.token.split(':')[1]).toHaveLength(35);
    expect(other.id).toBe(Number(other.token.split(':')[0]));
    expect(emu.bot(other.id).token).toBe(other.token);
    expect(emu.bot('@relay_test_bot').id).toBe(bot.id);
  });

  it('answers getMe with the bot user', async () => {
    const answer = await callApi(emu.apiRoot, bot.token, 'getMe');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      ok: true,
      result: expect.objectContaining({
        id: bot.id,
        is_bot: true,
        first_name: 'Relay',
        username: 'relay_test_bot',
      }),
    });
  });

  it('answers 401 Unauthorized for an unknown token', async () => {
    const answer = await callApi(
      emu.apiRoot,
      '123456:AAHunknownunknownunknownunknown12345',
      'getMe',
    );
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual({ ok: false, error_code: 401, description: 'Unauthorized' });
  });

  it('answers 404 Not Found for an unknown method and paths that are not /bot<token>', async () => {
    const answer = await callApi(emu.apiRoot, bot.token, 'sendTelepathy');
    expect(answer.status).toBe(404);
    expect(answer.body).toEqual({ ok: false, error_code: 404, description: 'Not Found' });
    const stray = await request(`${emu.apiRoot}/nothing/here`);
    expect(stray.statusCode).toBe(404);
    expect(await stray.body.json()).toEqual({
      ok: false,
      error_code: 404,
      description: 'Not Found',
    });
  });

  it('treats method names case-insensitively and records the canonical name', async () => {
    const answer = await callApi(emu.apiRoot, bot.token, 'SENDMESSAGE', { chat_id: 7, text: 'hi' });
    expect(answer.status).toBe(200);
    expect(emu.calls(bot.id).map((c) => c.method)).toEqual(['sendMessage']);
  });

  it('shows every answered call to a watcher until it stops watching', async () => {
    const seen: (number | undefined)[] = [];
    const stop = emu.watchCalls(bot.id, (call) => seen.push(call.status));
    await callApi(emu.apiRoot, bot.token, 'sendMessage', { chat_id: 7, text: 'hi' });
    await callApi(emu.apiRoot, bot.token, 'sendMessage', { text: 'no chat' });
    stop();
    await callApi(emu.apiRoot, bot.token, 'sendMessage', { chat_id: 7, text: 'after' });
    expect(seen).toEqual([200, 400]);
  });

  it.each<Encoding>(['query', 'json', 'form', 'multipart'])(
    'reads %s parameters the same way',
    async (encoding) => {
      const markup = { inline_keyboard: [[{ text: 'Yes', callback_data: 'yes' }]] };
      const message = await resultOf<TelegramMessage>(
        emu.apiRoot,
        bot.token,
        'sendMessage',
        {
          chat_id: -1001234567890,
          text: 'encoded',
          reply_markup: markup,
          disable_notification: true,
        },
        { encoding },
      );
      expect(message.chat).toEqual(
        expect.objectContaining({ id: -1001234567890, type: 'supergroup' }),
      );
      expect(message.text).toBe('encoded');
      expect(message.reply_markup).toEqual(markup);
      const [call] = emu.sent(bot.id);
      expect(call?.params).toEqual({
        chat_id: -1001234567890,
        text: 'encoded',
        reply_markup: markup,
        disable_notification: true,
      });
    },
  );

  it('accepts POST with parameters in the query string, the body winning over the query', async () => {
    const answer = await callApi(
      emu.apiRoot,
      bot.token,
      'sendMessage',
      { chat_id: 5, text: 'q' },
      {
        encoding: 'query',
        httpMethod: 'POST',
      },
    );
    expect(answer.body.ok).toBe(true);
    const mixed = await request(`${emu.apiRoot}/bot${bot.token}/sendMessage?chat_id=5&text=query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'body' }),
    });
    expect(((await mixed.body.json()) as { result: TelegramMessage }).result.text).toBe('body');
  });

  it('reads JSON sent with a charset', async () => {
    const answer = await request(`${emu.apiRoot}/bot${bot.token}/sendMessage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ chat_id: 1, text: 'héllo' }),
    });
    expect(((await answer.body.json()) as { result: TelegramMessage }).result.text).toBe('héllo');
  });

  it('refuses to start on a port in use', async () => {
    await expect(TelegramEmulator.start({ port: emu.port })).rejects.toThrow(/EADDRINUSE/);
  });

  it('refuses a JSON body that is not an object, like Telegram', async () => {
    const answer = await request(`${emu.apiRoot}/bot${bot.token}/sendMessage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"chat_id": 5,',
    });
    expect(answer.statusCode).toBe(400);
    expect(await answer.body.json()).toEqual({
      ok: false,
      error_code: 400,
      description: "Bad Request: can't parse JSON object",
    });
  });

  it.each([
    ['cut short inside a part', '--b1\r\nContent-Disposition: form-data; name="chat_id"\r\n\r\n5'],
    ['with a broken part header', '--b1\r\nContent-Disposition\r\n\r\nx\r\n--b1--\r\n'],
  ])('answers 400, not 500, to a multipart body %s', async (_what, body) => {
    const answer = await request(`${emu.apiRoot}/bot${bot.token}/sendMessage`, {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=b1' },
      body,
    });
    const parsed = (await answer.body.json()) as { error_code: number; description: string };
    expect(answer.statusCode).toBe(400);
    expect(parsed.error_code).toBe(400);
    expect(parsed.description).toMatch(/^Bad Request: /);
    expect(emu.calls(bot.id).filter((c) => c.status === 200)).toEqual([]);
  });

  it('ignores a body of a type it cannot read and keeps the query parameters', async () => {
    const answer = await request(
      `${emu.apiRoot}/bot${bot.token}/sendMessage?chat_id=3&text=plain`,
      {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: 'whatever',
      },
    );
    expect(answer.statusCode).toBe(200);
    expect(((await answer.body.json()) as { result: TelegramMessage }).result.text).toBe('plain');
  });

  it('keeps at most historyLimit calls per bot and overall', async () => {
    const small = await TelegramEmulator.start({ historyLimit: 3 });
    try {
      const b = small.addBot();
      for (let i = 1; i <= 5; i++) {
        await resultOf(small.apiRoot, b.token, 'sendMessage', { chat_id: 1, text: `m${i}` });
      }
      expect(small.sent(b.id).map((c) => c.params['text'])).toEqual(['m3', 'm4', 'm5']);
      expect(small.calls()).toHaveLength(3);
    } finally {
      await small.stop();
    }
  });
});
