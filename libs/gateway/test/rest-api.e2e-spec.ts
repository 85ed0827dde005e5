import { post, type JsonAnswer } from './http-client';
import { startGatewayHarness, type GatewayHarness } from './gateway-harness';

type Message = { message_id: number; text?: string; chat: { id: number } };

describe('REST API', () => {
  let h: GatewayHarness;
  let chat = 1000;

  const rest = <T = Record<string, unknown>>(
    path: string,
    body: unknown,
    token: string | null = h.siteToken,
    headers: Record<string, string> = {},
  ): Promise<JsonAnswer<T>> =>
    post<T>(`${h.url}/api/v1/${path}`, body, {
      ...(token === null ? {} : { 'x-service-token': token }),
      ...headers,
    });

  /** A message of the bot in a fresh chat, sent straight to the emulator. */
  const botMessage = async (text = 'original'): Promise<Message> => {
    const res = await rest<Message>('messages/send', { chat_id: ++chat, text });
    expect(res.status).toBe(200);
    return res.body;
  };
  const lastCall = (bot = h.main) => h.emulator.calls(bot.id).at(-1);

  beforeAll(async () => {
    h = await startGatewayHarness();
  });
  afterAll(() => h.close());

  describe('every row of the table', () => {
    it('messages/send answers Telegram result as is', async () => {
      const res = await rest<Message>('main-bot/messages/send', {
        chat_id: 42,
        text: '<b>hi</b>',
        options: { parse_mode: 'HTML', disable_notification: true },
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ chat: { id: 42 }, text: '<b>hi</b>' });
      expect(lastCall()).toMatchObject({
        method: 'sendMessage',
        params: { chat_id: 42, text: '<b>hi</b>', parse_mode: 'HTML', disable_notification: true },
        status: 200,
      });
    });

    it('messages/edit', async () => {
      const sent = await botMessage();
      const res = await rest<Message>('main-bot/messages/edit', {
        chat_id: sent.chat.id,
        message_id: sent.message_id,
        text: 'edited',
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ message_id: sent.message_id, text: 'edited' });
      expect(h.emulator.storedMessage(h.main.id, sent.chat.id, sent.message_id)?.text).toBe(
        'edited',
      );
    });

    it('messages/edit-markup', async () => {
      const sent = await botMessage();
      const markup = { inline_keyboard: [[{ text: 'go', callback_data: 'go' }]] };
      const res = await rest('main-bot/messages/edit-markup', {
        chat_id: sent.chat.id,
        message_id: sent.message_id,
        reply_markup: markup,
      });
      expect(res.status).toBe(200);
      expect(lastCall()).toMatchObject({
        method: 'editMessageReplyMarkup',
        params: { reply_markup: markup },
        status: 200,
      });
    });

    it('messages/delete answers true', async () => {
      const sent = await botMessage();
      const res = await rest('main-bot/messages/delete', {
        chat_id: sent.chat.id,
        message_id: sent.message_id,
      });
      expect(res.status).toBe(200);
      expect(res.body).toBe(true);
      expect(h.emulator.storedMessage(h.main.id, sent.chat.id, sent.message_id)).toBeUndefined();
    });

    it('messages/forward and messages/copy', async () => {
      const sent = await botMessage('to pass on');
      const forwarded = await rest<Message>('main-bot/messages/forward', {
        chat_id: 77,
        from_chat_id: sent.chat.id,
        message_id: sent.message_id,
        options: { disable_notification: true },
      });
      expect(forwarded.status).toBe(200);
      expect(forwarded.body).toMatchObject({ chat: { id: 77 }, text: 'to pass on' });
      const copied = await rest<{ message_id: number }>('main-bot/messages/copy', {
        chat_id: 78,
        from_chat_id: sent.chat.id,
        message_id: sent.message_id,
      });
      expect(copied.status).toBe(200);
      expect(copied.body.message_id).toEqual(expect.any(Number));
      expect(lastCall()).toMatchObject({ method: 'copyMessage', params: { chat_id: 78 } });
    });

    it('photos/send and documents/send by file_id or URL', async () => {
      const photo = await rest('main-bot/photos/send', {
        chat_id: 5,
        photo: 'https://example.com/cat.png',
        options: { caption: 'a cat' },
      });
      expect(photo.status).toBe(200);
      expect(lastCall()).toMatchObject({
        method: 'sendPhoto',
        params: { photo: 'https://example.com/cat.png', caption: 'a cat' },
      });
      const doc = await rest('main-bot/documents/send', {
        chat_id: 5,
        document: 'https://example.com/report.pdf',
      });
      expect(doc.status).toBe(200);
      expect(lastCall()).toMatchObject({ method: 'sendDocument', status: 200 });
    });

    it('callbacks/answer', async () => {
      const sent = await botMessage('with a button');
      const update = h.emulator.callback(h.main.id, {
        chatId: sent.chat.id,
        userId: sent.chat.id,
        data: 'go',
        messageId: sent.message_id,
      });
      const query = update.callback_query as { id: string };
      const res = await rest('main-bot/callbacks/answer', {
        callback_query_id: query.id,
        options: { text: 'done', show_alert: true },
      });
      expect(res.status).toBe(200);
      expect(res.body).toBe(true);
      expect(lastCall()).toMatchObject({
        method: 'answerCallbackQuery',
        params: { callback_query_id: query.id, text: 'done', show_alert: true },
        status: 200,
      });
    });

    it('chat-actions/send', async () => {
      const res = await rest('main-bot/chat-actions/send', { chat_id: 5, action: 'typing' });
      expect(res.status).toBe(200);
      expect(res.body).toBe(true);
      expect(lastCall()).toMatchObject({ method: 'sendChatAction', params: { action: 'typing' } });
    });
  });

  describe('raw/:method', () => {
    it('calls any method and wraps its result', async () => {
      const res = await rest('main-bot/raw/getMe', {});
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ ok: true, result: { id: h.main.id, is_bot: true } });
      const sent = await rest('other-bot/raw/sendMessage', { chat_id: 3, text: 'raw' });
      expect(sent.body).toMatchObject({ ok: true, result: { text: 'raw' } });
      expect(lastCall(h.other)).toMatchObject({ method: 'sendMessage', params: { text: 'raw' } });
    });

    it('takes an urlencoded body and a body-less call', async () => {
      const res = await rest(
        'raw/sendMessage',
        'chat_id=9&text=form+body&reply_markup=%7B%22inline_keyboard%22%3A%5B%5D%7D',
        h.siteToken,
        { 'content-type': 'application/x-www-form-urlencoded' },
      );
      expect(res.status).toBe(200);
      expect(lastCall()).toMatchObject({
        method: 'sendMessage',
        params: { chat_id: 9, text: 'form body', reply_markup: { inline_keyboard: [] } },
      });
      const bare = await post(`${h.url}/api/v1/raw/getMe`, '', { 'x-service-token': h.siteToken });
      expect(bare.status).toBe(200);
      expect(bare.body).toMatchObject({ ok: true });
    });

    it('refuses reserved methods in any case, Telegram-style, without calling Telegram', async () => {
      const before = h.emulator.calls(h.main.id).length;
      for (const method of [
        'getupdates',
        'getUpdates',
        'DeleteWebhook',
        'setWebhook',
        'logOut',
        'CLOSE',
      ]) {
        const res = await rest(`main-bot/raw/${method}`, {});
        expect(res.status).toBe(403);
        expect(res.body).toEqual({
          ok: false,
          error_code: 403,
          description: 'Forbidden: reserved by the gateway',
        });
      }
      expect(h.emulator.calls(h.main.id).length).toBe(before);
    });

    it('refuses a method parameter in the body and a method name outside ^[A-Za-z]+$', async () => {
      const before = h.emulator.calls(h.main.id).length;
      const withMethod = await rest('raw/sendMessage', {
        chat_id: 1,
        text: 'x',
        method: 'getUpdates',
      });
      expect(withMethod.status).toBe(400);
      expect(withMethod.body.error).toMatch(/"method" parameter/);
      const formMethod = await rest('raw/sendMessage', 'chat_id=1&Method=close', h.siteToken, {
        'content-type': 'application/x-www-form-urlencoded',
      });
      expect(formMethod.status).toBe(400);
      const badName = await rest('raw/send_message', {});
      expect(badName.status).toBe(400);
      expect(badName.body.error).toMatch(/\^\[A-Za-z\]\+\$/);
      expect(h.emulator.calls(h.main.id).length).toBe(before);
    });

    it('refuses a body that is not an object', async () => {
      const res = await rest('raw/sendMessage', [1, 2]);
      expect(res.status).toBe(400);
    });
  });

  describe('the bot-less default form', () => {
    it('uses the default bot', async () => {
      const res = await rest<Message>('messages/send', { chat_id: 11, text: 'default' });
      expect(res.status).toBe(200);
      expect(lastCall()).toMatchObject({ method: 'sendMessage', params: { text: 'default' } });
    });
  });

  describe('validation', () => {
    it('answers a missing chat_id with a 400 naming it, before any call', async () => {
      const before = h.emulator.calls(h.main.id).length;
      const res = await rest('messages/send', { text: 'no chat' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'chat_id is required' });
      const several = await rest('messages/edit', { chat_id: 1, message_id: 'x' });
      expect(several.body).toEqual({
        error: 'message_id must be a positive integer; text is required',
      });
      expect(h.emulator.calls(h.main.id).length).toBe(before);
    });

    it('reads a form body with the same rules', async () => {
      const res = await rest(
        'messages/send',
        'chat_id=12&text=from+a+form&options=%7B%22parse_mode%22%3A%22HTML%22%7D',
        h.siteToken,
        {
          'content-type': 'application/x-www-form-urlencoded',
        },
      );
      expect(res.status).toBe(200);
      expect(lastCall()).toMatchObject({
        params: { chat_id: 12, text: 'from a form', parse_mode: 'HTML' },
      });
      const missing = await rest('messages/send', 'text=x', h.siteToken, {
        'content-type': 'application/x-www-form-urlencoded',
      });
      expect(missing.body).toEqual({ error: 'chat_id is required' });
    });

    it('answers bad JSON with 400, other content types with 415, a large body with 413', async () => {
      const bad = await rest('messages/send', '{"chat_id":', h.siteToken, {
        'content-type': 'application/json',
      });
      expect(bad.status).toBe(400);
      const text = await rest('messages/send', 'hello', h.siteToken, {
        'content-type': 'text/plain',
      });
      expect(text.status).toBe(415);
      const multipart = await rest('messages/send', '--x--\r\n', h.siteToken, {
        'content-type': 'multipart/form-data; boundary=x',
      });
      expect(multipart.status).toBe(415);
      const large = await rest('messages/send', { chat_id: 1, text: 'x'.repeat(1024 * 1024 + 1) });
      expect(large.status).toBe(413);
    });
  });

  describe('auth and scoping', () => {
    it('answers 401 without a token or with a wrong one', async () => {
      for (const token of [null, '', 'wrong', `${h.siteToken}x`, h.siteToken.slice(1)]) {
        const res = await rest('main-bot/messages/send', { chat_id: 1, text: 'x' }, token);
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ error: 'unauthorized' });
      }
    });

    it('answers 403 for a bot or a method outside the client lists', async () => {
      const lonely = await rest('lonely-bot/messages/send', { chat_id: 1, text: 'x' });
      expect(lonely.status).toBe(403);
      expect(lonely.body.error).toMatch(/lonely-bot/);
      const narrowBot = await rest(
        'other-bot/messages/send',
        { chat_id: 1, text: 'x' },
        h.narrowToken,
      );
      expect(narrowBot.status).toBe(403);
      const narrowMethod = await rest(
        'main-bot/photos/send',
        { chat_id: 1, photo: 'x' },
        h.narrowToken,
      );
      expect(narrowMethod.status).toBe(403);
      expect(narrowMethod.body.error).toMatch(/sendPhoto/);
      const narrowRaw = await rest('raw/sendDocument', {}, h.narrowToken);
      expect(narrowRaw.status).toBe(403);
      const allowed = await rest(
        'main-bot/messages/send',
        { chat_id: 1, text: 'x' },
        h.narrowToken,
      );
      expect(allowed.status).toBe(200);
      const allowedRaw = await rest('raw/getme', {}, h.narrowToken);
      expect(allowedRaw.status).toBe(200);
    });

    it('answers 404 for an unknown bot and an unknown path', async () => {
      const unknown = await rest('no-such-bot/messages/send', { chat_id: 1, text: 'x' });
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ error: 'unknown bot "no-such-bot"' });
      const path = await rest('main-bot/messages/shout', { chat_id: 1, text: 'x' });
      expect(path.status).toBe(404);
    });
  });
});

describe('REST API without a default bot', () => {
  let h: GatewayHarness;
  beforeAll(async () => {
    h = await startGatewayHarness({ noDefaultBot: true });
  });
  afterAll(() => h.close());

  it('answers the bot-less paths 404 and serves the named ones', async () => {
    const headers = { 'x-service-token': h.siteToken };
    const botless = await post(`${h.url}/api/v1/messages/send`, { chat_id: 1, text: 'x' }, headers);
    expect(botless.status).toBe(404);
    expect(botless.body.error).toMatch(/no default bot/);
    const raw = await post(`${h.url}/api/v1/raw/getMe`, {}, headers);
    expect(raw.status).toBe(404);
    const named = await post(
      `${h.url}/api/v1/main-bot/messages/send`,
      { chat_id: 1, text: 'x' },
      headers,
    );
    expect(named.status).toBe(200);
  });
});
