import { callApi, resultOf } from '../test/bot-api-client';
import { emulatorPerSpec } from '../test/shared-emulator';
import type { BotIdentity, TelegramMessage } from './emulator.types';
import type { TelegramEmulator } from './telegram-emulator';

describe('sending methods', () => {
  let emu: TelegramEmulator;
  let bot: BotIdentity;

  const api = <T>(method: string, params: Record<string, unknown> = {}) =>
    resultOf<T>(emu.apiRoot, bot.token, method, params);
  const error = async (method: string, params: Record<string, unknown>) => {
    const answer = await callApi(emu.apiRoot, bot.token, method, params);
    return { status: answer.status, description: answer.body.description };
  };
  const keyboard = (data: string) => ({ inline_keyboard: [[{ text: data, callback_data: data }]] });

  emulatorPerSpec(
    (started, fresh) => {
      emu = started;
      bot = fresh;
    },
    { username: 'sender_bot' },
  );

  describe('sendMessage', () => {
    it('answers a realistic Message whose ids rise per chat', async () => {
      const before = Math.floor(Date.now() / 1000);
      const first = await api<TelegramMessage>('sendMessage', {
        chat_id: 1001,
        text: '*hello*',
        parse_mode: 'MarkdownV2',
        entities: [{ type: 'bold', offset: 0, length: 7 }],
        reply_markup: keyboard('go'),
      });
      expect(first).toEqual({
        message_id: 1,
        from: { id: bot.id, is_bot: true, first_name: 'Emulator Bot', username: 'sender_bot' },
        chat: { id: 1001, first_name: 'User 1001', type: 'private' },
        date: expect.any(Number),
        text: '*hello*',
        entities: [{ type: 'bold', offset: 0, length: 7 }],
        reply_markup: keyboard('go'),
      });
      expect(first.date).toBeGreaterThanOrEqual(before);
      const second = await api<TelegramMessage>('sendMessage', { chat_id: 1001, text: 'again' });
      const elsewhere = await api<TelegramMessage>('sendMessage', { chat_id: -42, text: 'group' });
      expect([second.message_id, elsewhere.message_id]).toEqual([2, 1]);
      expect(elsewhere.chat.type).toBe('group');
    });

    it('continues the chat’s sequence after the user’s messages and can reply to them', async () => {
      const update = emu.message(bot.id, { chatId: 7, text: 'question', firstName: 'Ann' });
      const asked = update['message'] as TelegramMessage;
      const answer = await api<TelegramMessage>('sendMessage', {
        chat_id: 7,
        text: 'answer',
        reply_parameters: { message_id: asked.message_id },
      });
      expect(answer.message_id).toBe(asked.message_id + 1);
      expect(answer.chat).toEqual({ id: 7, first_name: 'Ann', type: 'private' });
      expect(answer.reply_to_message).toEqual(asked);
      expect(
        await error('sendMessage', { chat_id: 7, text: 'x', reply_to_message_id: 999 }),
      ).toEqual({
        status: 400,
        description: 'Bad Request: message to be replied not found',
      });
    });

    it('leaves reply keyboards out of the Message, as Telegram does', async () => {
      const message = await api<TelegramMessage>('sendMessage', {
        chat_id: 3,
        text: 'pick',
        reply_markup: { keyboard: [[{ text: 'A' }]], one_time_keyboard: true },
      });
      expect(message.reply_markup).toBeUndefined();
    });

    it('validates chat_id and text like Telegram', async () => {
      expect(await error('sendMessage', { text: 'no chat' })).toEqual({
        status: 400,
        description: 'Bad Request: chat_id is empty',
      });
      expect(await error('sendMessage', { chat_id: 5 })).toEqual({
        status: 400,
        description: 'Bad Request: message text is empty',
      });
      expect(await error('sendMessage', { chat_id: 5, text: '   ' })).toEqual({
        status: 400,
        description: 'Bad Request: message text is empty',
      });
      expect(await error('sendMessage', { chat_id: 'not a chat', text: 'x' })).toEqual({
        status: 400,
        description: 'Bad Request: chat not found',
      });
      expect(await error('sendMessage', { chat_id: 5, text: 'x'.repeat(4097) })).toEqual({
        status: 400,
        description: 'Bad Request: message is too long',
      });
      expect(await error('sendMessage', { chat_id: 5, text: 'x', reply_markup: '{oops' })).toEqual({
        status: 400,
        description: "Bad Request: can't parse reply keyboard markup JSON object",
      });
    });

    it('sends to a public channel by @username', async () => {
      const message = await api<TelegramMessage>('sendMessage', {
        chat_id: '@news_channel',
        text: 'post',
      });
      expect(message.chat).toEqual(
        expect.objectContaining({ type: 'channel', username: 'news_channel' }),
      );
      expect(message.chat.id).toBeLessThan(-1_000_000_000_000);
      expect(message.sender_chat).toEqual(message.chat);
      expect(message.from).toBeUndefined();
    });
  });

  describe('editing and deleting', () => {
    let sent: TelegramMessage;
    beforeEach(async () => {
      sent = await api<TelegramMessage>('sendMessage', {
        chat_id: 9,
        text: 'draft',
        reply_markup: keyboard('a'),
      });
    });

    it('edits the text of the bot’s message', async () => {
      const edited = await api<TelegramMessage>('editMessageText', {
        chat_id: 9,
        message_id: sent.message_id,
        text: 'final',
      });
      expect(edited).toEqual({
        ...sent,
        text: 'final',
        edit_date: expect.any(Number),
        reply_markup: undefined,
      });
      expect(edited.reply_markup).toBeUndefined();
      expect(emu.storedMessage(bot.id, 9, sent.message_id)?.text).toBe('final');
    });

    it('refuses edits that change nothing, of unknown messages and of others’ messages', async () => {
      expect(
        await error('editMessageText', {
          chat_id: 9,
          message_id: sent.message_id,
          text: 'draft',
          reply_markup: keyboard('a'),
        }),
      ).toEqual({
        status: 400,
        description:
          'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message',
      });
      expect(await error('editMessageText', { chat_id: 9, message_id: 404, text: 'x' })).toEqual({
        status: 400,
        description: 'Bad Request: message to edit not found',
      });
      const update = emu.message(bot.id, { chatId: 9, text: 'mine' });
      const theirs = (update['message'] as TelegramMessage).message_id;
      expect(await error('editMessageText', { chat_id: 9, message_id: theirs, text: 'x' })).toEqual(
        {
          status: 400,
          description: "Bad Request: message can't be edited",
        },
      );
    });

    it('answers true for inline messages', async () => {
      expect(await api('editMessageText', { inline_message_id: 'AgAAAB', text: 'inline' })).toBe(
        true,
      );
      expect(await api('editMessageReplyMarkup', { inline_message_id: 'AgAAAB' })).toBe(true);
    });

    it('edits and removes the inline keyboard', async () => {
      const changed = await api<TelegramMessage>('editMessageReplyMarkup', {
        chat_id: 9,
        message_id: sent.message_id,
        reply_markup: keyboard('b'),
      });
      expect(changed.reply_markup).toEqual(keyboard('b'));
      expect(changed.text).toBe('draft');
      const removed = await api<TelegramMessage>('editMessageReplyMarkup', {
        chat_id: 9,
        message_id: sent.message_id,
      });
      expect(removed.reply_markup).toBeUndefined();
      expect(
        (await error('editMessageReplyMarkup', { chat_id: 9, message_id: sent.message_id }))
          .description,
      ).toMatch(/^Bad Request: message is not modified/);
      expect(await error('editMessageReplyMarkup', { chat_id: 9, message_id: 77 })).toEqual({
        status: 400,
        description: 'Bad Request: message to edit not found',
      });
    });

    it('deletes a message once', async () => {
      expect(await api('deleteMessage', { chat_id: 9, message_id: sent.message_id })).toBe(true);
      expect(emu.storedMessage(bot.id, 9, sent.message_id)).toBeUndefined();
      expect(await error('deleteMessage', { chat_id: 9, message_id: sent.message_id })).toEqual({
        status: 400,
        description: 'Bad Request: message to delete not found',
      });
    });
  });

  describe('forwardMessage and copyMessage', () => {
    it('forwards a user’s message with its origin', async () => {
      const update = emu.message(bot.id, { chatId: 11, text: 'pass it on', firstName: 'Bo' });
      const original = update['message'] as TelegramMessage;
      const forwarded = await api<TelegramMessage>('forwardMessage', {
        chat_id: -500,
        from_chat_id: 11,
        message_id: original.message_id,
      });
      expect(forwarded).toEqual(
        expect.objectContaining({
          message_id: 1,
          chat: expect.objectContaining({ id: -500 }),
          text: 'pass it on',
          forward_origin: { type: 'user', sender_user: original.from, date: original.date },
        }),
      );
      expect(
        await error('forwardMessage', { chat_id: -500, from_chat_id: 11, message_id: 999 }),
      ).toEqual({
        status: 400,
        description: 'Bad Request: message to forward not found',
      });
    });

    it('copies a message and answers only its new id', async () => {
      const sent = await api<TelegramMessage>('sendMessage', { chat_id: 12, text: 'copy me' });
      const copy = await api<{ message_id: number }>('copyMessage', {
        chat_id: 13,
        from_chat_id: 12,
        message_id: sent.message_id,
      });
      expect(copy).toEqual({ message_id: 1 });
      const stored = emu.storedMessage(bot.id, 13, 1);
      expect(stored?.text).toBe('copy me');
      expect(stored?.forward_origin).toBeUndefined();
      expect(
        await error('copyMessage', { chat_id: 13, from_chat_id: 12, message_id: 999 }),
      ).toEqual({
        status: 400,
        description: 'Bad Request: message to copy not found',
      });
    });
  });

  describe('answerCallbackQuery and sendChatAction', () => {
    it('answers a callback query the bot received', async () => {
      const update = emu.callback(bot.id, { chatId: 5, userId: 5, data: 'vote:1' });
      const query = update['callback_query'] as { id: string };
      expect(
        await api('answerCallbackQuery', { callback_query_id: query.id, text: 'Thanks' }),
      ).toBe(true);
      expect(await error('answerCallbackQuery', { callback_query_id: '123' })).toEqual({
        status: 400,
        description:
          'Bad Request: query is too old and response timeout expired or query ID is invalid',
      });
    });

    it('accepts known chat actions only', async () => {
      expect(await api('sendChatAction', { chat_id: 5, action: 'typing' })).toBe(true);
      expect(await error('sendChatAction', { chat_id: 5, action: 'dancing' })).toEqual({
        status: 400,
        description: 'Bad Request: wrong parameter action in request',
      });
      expect(await error('sendChatAction', { action: 'typing' })).toEqual({
        status: 400,
        description: 'Bad Request: chat_id is empty',
      });
    });
  });

  it('records what the bot sent, without getters and webhook calls', async () => {
    await api('getMe');
    await api('sendMessage', { chat_id: 1, text: 'one' });
    await api('sendChatAction', { chat_id: 1, action: 'typing' });
    await callApi(emu.apiRoot, bot.token, 'sendMessage', { chat_id: 1 });
    await api('deleteWebhook');

    const sent = emu.sent(bot.id);
    expect(sent.map((c) => [c.method, c.status])).toEqual([
      ['sendMessage', 200],
      ['sendChatAction', 200],
      ['sendMessage', 400],
    ]);
    expect(sent[0]).toEqual(
      expect.objectContaining({
        bot: bot.id,
        params: { chat_id: 1, text: 'one' },
        via: 'http',
        result: expect.objectContaining({ text: 'one' }),
      }),
    );
    expect(sent[2]?.error).toEqual({
      ok: false,
      error_code: 400,
      description: 'Bad Request: message text is empty',
    });
    expect(emu.sent(bot.id, { method: 'sendmessage' })).toHaveLength(2);
    expect(emu.calls(bot.id)).toHaveLength(5);
  });

  it('callback builder presses the button under the bot’s last message', async () => {
    const menu = await api<TelegramMessage>('sendMessage', {
      chat_id: 21,
      text: 'menu',
      reply_markup: keyboard('pick'),
    });
    const update = emu.callback(bot.id, { chatId: 21, userId: 21, data: 'pick' });
    expect(update['callback_query']).toEqual({
      id: expect.stringMatching(/^\d{18}$/),
      from: expect.objectContaining({ id: 21, is_bot: false }),
      message: menu,
      chat_instance: expect.any(String),
      data: 'pick',
    });
  });

  it('message builder adds the bot_command entity to commands only', () => {
    const command = emu.message(bot.id, { chatId: 2, text: '/start@sender_bot now' })['message'];
    expect((command as TelegramMessage).entities).toEqual([
      { type: 'bot_command', offset: 0, length: 17 },
    ]);
    const plain = emu.message(bot.id, { chatId: 2, text: 'hello /start' })['message'];
    expect((plain as TelegramMessage).entities).toBeUndefined();
    const group = emu.message(bot.id, { chatId: -77, text: 'hi', userId: 8 })['message'];
    expect(group).toEqual(
      expect.objectContaining({
        chat: expect.objectContaining({ id: -77, type: 'group' }),
        from: expect.objectContaining({ id: 8 }),
      }),
    );
  });
});
