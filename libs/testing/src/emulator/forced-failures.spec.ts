import { request } from 'undici';
import { callApi } from '../test/bot-api-client';
import { emulatorPerSpec } from '../test/shared-emulator';
import type { BotIdentity } from './emulator.types';
import type { TelegramEmulator } from './telegram-emulator';

describe('forced failures', () => {
  let emu: TelegramEmulator;
  let bot: BotIdentity;

  const send = (text = 'hi') =>
    callApi(emu.apiRoot, bot.token, 'sendMessage', { chat_id: 1, text });

  emulatorPerSpec((started, fresh) => {
    emu = started;
    bot = fresh;
  });

  it('answers 401 Unauthorized on every method, once by default', async () => {
    emu.failUnauthorized(bot.id);
    const answer = await callApi(emu.apiRoot, bot.token, 'getMe');
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual({ ok: false, error_code: 401, description: 'Unauthorized' });
    expect((await callApi(emu.apiRoot, bot.token, 'getMe')).status).toBe(200);
  });

  it('answers 403 when the user blocked the bot, for the named method only', async () => {
    emu.failBlockedByUser(bot.id, 'sendMessage');
    expect(
      (await callApi(emu.apiRoot, bot.token, 'sendChatAction', { chat_id: 1, action: 'typing' }))
        .status,
    ).toBe(200);
    const answer = await send();
    expect(answer.status).toBe(403);
    expect(answer.body).toEqual({
      ok: false,
      error_code: 403,
      description: 'Forbidden: bot was blocked by the user',
    });
    expect((await send()).status).toBe(200);
  });

  it('answers 403 to every send to the chats that blocked the bot, until unblocked', async () => {
    emu.blockChats(bot.id, [1, '@shop_channel']);
    const other = await callApi(emu.apiRoot, bot.token, 'sendMessage', { chat_id: 2, text: 'x' });
    expect(other.status).toBe(200);
    for (const chatId of [1, '1', '@shop_channel']) {
      const answer = await callApi(emu.apiRoot, bot.token, 'sendMessage', {
        chat_id: chatId,
        text: 'x',
      });
      expect(answer.body).toEqual({
        ok: false,
        error_code: 403,
        description: 'Forbidden: bot was blocked by the user',
      });
    }
    expect((await callApi(emu.apiRoot, bot.token, 'getChat', { chat_id: 1 })).status).not.toBe(403);
    emu.unblockChats(bot.id, [1]);
    expect((await send()).status).toBe(200);
    emu.unblockChats(bot.id);
    const channel = { chat_id: '@shop_channel', text: 'x' };
    expect((await callApi(emu.apiRoot, bot.token, 'sendMessage', channel)).status).toBe(200);
  });

  it('answers 429 with retry_after in parameters', async () => {
    emu.failTooManyRequests(bot.id, 7, 'sendmessage', 2);
    for (let i = 0; i < 2; i++) {
      const answer = await send();
      expect(answer.status).toBe(429);
      expect(answer.body).toEqual({
        ok: false,
        error_code: 429,
        description: 'Too Many Requests: retry after 7',
        parameters: { retry_after: 7 },
      });
    }
    expect((await send()).status).toBe(200);
  });

  it('answers 5xx server errors', async () => {
    emu.failServerError(bot.id, 500);
    emu.failServerError(bot.id, 502);
    const first = await send();
    expect(first.status).toBe(500);
    expect(first.body).toEqual({
      ok: false,
      error_code: 500,
      description: 'Internal Server Error',
    });
    const second = await send();
    expect([second.status, second.body.description]).toEqual([502, 'Bad Gateway']);
  });

  it('fails every call with times: "always" until cleared', async () => {
    emu.fail(bot.id, {
      times: 'always',
      error: {
        code: 400,
        description: 'Bad Request: group chat was upgraded to a supergroup chat',
        migrateToChatId: -1001234,
      },
    });
    for (let i = 0; i < 3; i++) {
      const answer = await send();
      expect(answer.body.parameters).toEqual({ migrate_to_chat_id: -1001234 });
    }
    emu.clearFailures(bot.id);
    expect((await send()).status).toBe(200);
  });

  it('delays an answer, then runs the method', async () => {
    emu.fail(bot.id, { method: 'sendMessage', delayMs: 300 });
    const started = Date.now();
    const answer = await send('late');
    expect(answer.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(emu.sent(bot.id)[0]?.result).toEqual(expect.objectContaining({ text: 'late' }));
  });

  it('drops the connection without an answer and records it', async () => {
    emu.fail(bot.id, { drop: true });
    await expect(send('dropped')).rejects.toThrow();
    const [call] = emu.calls(bot.id);
    expect(call).toEqual(expect.objectContaining({ method: 'sendMessage', status: 0 }));
    expect(emu.storedMessage(bot.id, 1, 1)).toBeUndefined();
    expect((await send()).status).toBe(200);
  });

  it('uses failures in the order they were added', async () => {
    emu.failServerError(bot.id, 503);
    emu.failBlockedByUser(bot.id);
    expect((await send()).status).toBe(503);
    expect((await send()).status).toBe(403);
    expect((await send()).status).toBe(200);
  });

  it('refuses malformed specs', () => {
    expect(() => emu.fail(bot.id, { error: { code: 200, description: 'ok' } })).toThrow(TypeError);
    expect(() => emu.fail(bot.id, { times: 0, drop: true })).toThrow(TypeError);
    expect(() => emu.fail(bot.id, { delayMs: 5, drop: true } as never)).toThrow(TypeError);
  });

  it('records calls with an unknown token under no bot', async () => {
    const answer = await request(`${emu.apiRoot}/bot1:AAnope/getMe`);
    expect(answer.statusCode).toBe(401);
    await answer.body.dump();
    expect(emu.calls()).toEqual([expect.objectContaining({ bot: null, status: 401 })]);
  });
});
