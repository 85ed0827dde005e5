import { pngHead } from '@relaygram/testing';
import { Bot, GrammyError, InputFile } from 'grammy';
import { Telegraf, TelegramError } from 'telegraf';
import { startGatewayHarness, type GatewayHarness } from './gateway-harness';

function png(): Buffer {
  return Buffer.concat([pngHead(320, 240), Buffer.alloc(2048, 7)]);
}

/** Each framework talks to the gateway with only its API root changed. */
describe('bot frameworks through the drop-in', () => {
  let h: GatewayHarness;
  beforeAll(async () => {
    h = await startGatewayHarness();
  });
  afterAll(() => h.close());

  describe('grammY', () => {
    let bot: Bot;
    beforeAll(() => {
      bot = new Bot(h.dropInToken(h.main), { client: { apiRoot: h.url } });
    });

    it('sends and edits messages and uploads a photo', async () => {
      const sent = await bot.api.sendMessage(101, 'hello from grammY', {
        reply_markup: { inline_keyboard: [[{ text: 'press', callback_data: 'pressed' }]] },
      });
      expect(sent).toMatchObject({ chat: { id: 101 }, text: 'hello from grammY' });
      const edited = await bot.api.editMessageText(101, sent.message_id, 'edited by grammY');
      expect(edited).toMatchObject({ message_id: sent.message_id, text: 'edited by grammY' });
      const photo = await bot.api.sendPhoto(101, new InputFile(png(), 'cat.png'), {
        caption: 'cat',
      });
      expect(photo.photo?.length).toBeGreaterThan(0);
      // grammY sends the file as its own part, named by `photo: "attach://<part>"`.
      expect(h.emulator.calls(h.main.id, { method: 'sendPhoto' }).at(-1)).toMatchObject({
        status: 200,
        params: { chat_id: 101, caption: 'cat' },
      });
    });

    it('answers a callback query from inside an update handler', async () => {
      const sent = await bot.api.sendMessage(102, 'pick one', {
        reply_markup: { inline_keyboard: [[{ text: 'yes', callback_data: 'yes' }]] },
      });
      bot.on('callback_query:data', async (ctx) => {
        await ctx.answerCallbackQuery({ text: `you said ${ctx.callbackQuery.data}` });
        await ctx.editMessageText('answered');
      });
      await bot.init();
      expect(bot.botInfo.id).toBe(h.main.id);
      const update = h.emulator.callback(h.main.id, {
        chatId: 102,
        userId: 102,
        data: 'yes',
        messageId: sent.message_id,
      });
      await bot.handleUpdate(update as Parameters<Bot['handleUpdate']>[0]);
      expect(h.emulator.calls(h.main.id, { method: 'answerCallbackQuery' }).at(-1)).toMatchObject({
        status: 200,
        params: { text: 'you said yes' },
      });
      expect(h.emulator.storedMessage(h.main.id, 102, sent.message_id)?.text).toBe('answered');
    });

    it("gets Telegram's errors as GrammyError", async () => {
      h.emulator.failBlockedByUser(h.main.id, 'sendMessage');
      const error = await bot.api.sendMessage(103, 'x').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(GrammyError);
      expect(error).toMatchObject({
        error_code: 403,
        description: 'Forbidden: bot was blocked by the user',
      });
      const reserved = await bot.api.deleteWebhook().catch((e: unknown) => e);
      expect(reserved).toBeInstanceOf(GrammyError);
      expect(reserved).toMatchObject({
        error_code: 403,
        description: 'Forbidden: reserved by the gateway',
      });
      const stranger = new Bot(`${h.main.id}:not-a-client-token-000000`, {
        client: { apiRoot: h.url },
      });
      const unauthorized = await stranger.api.getMe().catch((e: unknown) => e);
      expect(unauthorized).toBeInstanceOf(GrammyError);
      expect(unauthorized).toMatchObject({ error_code: 401, description: 'Unauthorized' });
    });
  });

  describe('Telegraf', () => {
    let bot: Telegraf;
    beforeAll(() => {
      bot = new Telegraf(h.dropInToken(h.other), { telegram: { apiRoot: h.url } });
    });

    // Telegraf also puts `method` into every multipart body; it names the path's method.
    it('sends and edits messages, answers callbacks and uploads a photo', async () => {
      const sent = await bot.telegram.sendMessage(201, 'hello from Telegraf', {
        reply_markup: { inline_keyboard: [[{ text: 'go', callback_data: 'go' }]] },
      });
      expect(sent).toMatchObject({ chat: { id: 201 }, text: 'hello from Telegraf' });
      const edited = await bot.telegram.editMessageText(
        201,
        sent.message_id,
        undefined,
        'edited by Telegraf',
      );
      expect(edited).toMatchObject({ text: 'edited by Telegraf' });
      const update = h.emulator.callback(h.other.id, {
        chatId: 201,
        userId: 201,
        data: 'go',
        messageId: sent.message_id,
      });
      const query = update.callback_query as { id: string };
      expect(await bot.telegram.answerCbQuery(query.id, 'going')).toBe(true);
      const photo = await bot.telegram.sendPhoto(
        201,
        { source: png(), filename: 'dog.png' },
        { caption: 'dog' },
      );
      expect(photo.caption).toBe('dog');
      expect(h.emulator.calls(h.other.id, { method: 'sendPhoto' }).at(-1)).toMatchObject({
        status: 200,
        params: { caption: 'dog', photo: { filename: 'dog.png' } },
      });
    });

    it("gets Telegram's errors as TelegramError", async () => {
      h.emulator.failTooManyRequests(h.other.id, 3, 'sendMessage');
      const flood = await bot.telegram.sendMessage(202, 'x').catch((e: unknown) => e);
      expect(flood).toBeInstanceOf(TelegramError);
      expect((flood as TelegramError).response).toMatchObject({
        error_code: 429,
        parameters: { retry_after: 3 },
      });
      const reserved = await bot.telegram.callApi('getUpdates', {}).catch((e: unknown) => e);
      expect(reserved).toBeInstanceOf(TelegramError);
      expect((reserved as TelegramError).code).toBe(403);
      expect((reserved as TelegramError).description).toBe('Forbidden: reserved by the gateway');
    });
  });
});
