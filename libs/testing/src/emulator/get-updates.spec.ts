import { callApi, resultOf } from '../test/bot-api-client';
import { emulatorPerSpec } from '../test/shared-emulator';
import { eventually } from '../eventually';
import type { BotIdentity, Update } from './emulator.types';
import type { TelegramEmulator } from './telegram-emulator';

describe('getUpdates', () => {
  let emu: TelegramEmulator;
  let bot: BotIdentity;

  const getUpdates = (params: Record<string, unknown> = {}) =>
    resultOf<Update[]>(emu.apiRoot, bot.token, 'getUpdates', params);
  const ids = (updates: Update[]) => updates.map((u) => u.update_id);

  emulatorPerSpec((started, fresh) => {
    emu = started;
    bot = fresh;
  });

  it('returns pending updates with rising ids until an offset confirms them', async () => {
    const first = emu.message(bot.id, { chatId: 10, text: 'one' });
    const second = emu.message(bot.id, { chatId: 10, text: 'two' });
    expect(second.update_id).toBe(first.update_id + 1);

    expect(await getUpdates()).toEqual([first, second]);
    expect(await getUpdates()).toEqual([first, second]);
    expect(ids(await getUpdates({ offset: second.update_id }))).toEqual([second.update_id]);
    expect(await getUpdates()).toEqual([second]);
    expect(await getUpdates({ offset: second.update_id + 1 })).toEqual([]);
    expect(emu.pendingUpdates(bot.id)).toEqual([]);
  });

  it('honours limit (1-100, default 100)', async () => {
    const all = Array.from({ length: 105 }, (_, i) =>
      emu.message(bot.id, { chatId: 1, text: `${i}` }),
    );
    expect(await getUpdates({ limit: 2 })).toEqual(all.slice(0, 2));
    expect(await getUpdates({ limit: 0 })).toEqual(all.slice(0, 1));
    expect(await getUpdates()).toHaveLength(100);
    expect(await getUpdates({ limit: 500 })).toHaveLength(100);
  });

  it('counts a negative offset from the end and forgets what is before it', async () => {
    const all = [1, 2, 3, 4].map((n) => emu.message(bot.id, { chatId: 1, text: `${n}` }));
    expect(await getUpdates({ offset: -2 })).toEqual(all.slice(2));
    expect(await getUpdates()).toEqual(all.slice(2));
  });

  it('answers an offset far ahead of the queue from its head without confirming anything', async () => {
    const all = [1, 2].map((n) => emu.message(bot.id, { chatId: 1, text: `${n}` }));
    const last = all[1] as Update;
    expect(await getUpdates({ offset: last.update_id + 1000 })).toEqual(all);
    expect(await getUpdates()).toEqual(all);
  });

  it('long-polls until an update arrives, then answers at once', async () => {
    const poll = getUpdates({ timeout: 30 });
    await eventually(() => emu.calls(bot.id, { method: 'getUpdates' }).length === 1);
    const update = emu.message(bot.id, { chatId: 3, text: 'wake up' });
    expect(await poll).toEqual([update]);
  });

  it('answers an empty list when the long poll times out', async () => {
    expect(await getUpdates({ timeout: 1 })).toEqual([]);
  });

  it('gives updates injected together to one waiting poll', async () => {
    const poll = getUpdates({ timeout: 30 });
    await eventually(() => emu.calls(bot.id, { method: 'getUpdates' }).length === 1);
    const a = emu.message(bot.id, { chatId: 3, text: 'a' });
    const b = emu.message(bot.id, { chatId: 4, text: 'b' });
    expect(await poll).toEqual([a, b]);
  });

  it('terminates the older of two concurrent long polls with 409', async () => {
    const older = callApi(emu.apiRoot, bot.token, 'getUpdates', { timeout: 5 });
    await eventually(() => emu.calls(bot.id, { method: 'getUpdates' }).length === 1);
    const newer = getUpdates({ timeout: 5 });
    const conflict = await older;
    expect(conflict.status).toBe(409);
    expect(conflict.body).toEqual({
      ok: false,
      error_code: 409,
      description:
        'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running',
    });
    const update = emu.message(bot.id, { chatId: 1, text: 'for the newer one' });
    expect(await newer).toEqual([update]);
  });

  it('refuses getUpdates with 409 while a webhook is set', async () => {
    await resultOf(emu.apiRoot, bot.token, 'setWebhook', { url: 'http://127.0.0.1:9/hook' });
    const answer = await callApi(emu.apiRoot, bot.token, 'getUpdates');
    expect(answer.status).toBe(409);
    expect(answer.body.description).toBe(
      "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
    );
  });

  it('ends a waiting poll with 409 when a webhook is set', async () => {
    const poll = callApi(emu.apiRoot, bot.token, 'getUpdates', { timeout: 30 });
    await eventually(() => emu.calls(bot.id, { method: 'getUpdates' }).length === 1);
    await resultOf(emu.apiRoot, bot.token, 'setWebhook', { url: 'http://127.0.0.1:9/hook' });
    const answer = await poll;
    expect(answer.status).toBe(409);
    expect(answer.body.description).toBe('Conflict: terminated by setWebhook request');
  });

  describe('allowed_updates', () => {
    it('leaves out chat_member and reactions by default', async () => {
      const member = emu.injectUpdate(bot.id, { chat_member: { chat: { id: -5 } } });
      const message = emu.message(bot.id, { chatId: 1, text: 'hello' });
      expect(await getUpdates()).toEqual([message]);
      expect(member.update_id).toBeLessThan(message.update_id);
    });

    it('filters new updates and is remembered for the next calls', async () => {
      await getUpdates({ allowed_updates: ['callback_query'] });
      emu.message(bot.id, { chatId: 1, text: 'ignored' });
      const press = emu.callback(bot.id, { chatId: 1, userId: 1, data: 'ok' });
      expect(await getUpdates()).toEqual([press]);
      emu.message(bot.id, { chatId: 1, text: 'still ignored' });
      expect(await getUpdates({ offset: press.update_id + 1 })).toEqual([]);
    });

    it('does not filter updates already queued, like Telegram', async () => {
      const queued = emu.message(bot.id, { chatId: 1, text: 'queued before' });
      expect(await getUpdates({ allowed_updates: ['callback_query'] })).toEqual([queued]);
    });

    it('goes back to the default with an empty list', async () => {
      await getUpdates({ allowed_updates: ['chat_member'] });
      emu.message(bot.id, { chatId: 1, text: 'filtered' });
      await getUpdates({ allowed_updates: [], offset: -1 });
      const message = emu.message(bot.id, { chatId: 1, text: 'default again' });
      expect(await getUpdates()).toEqual([message]);
    });

    it('delivers types it does not know', async () => {
      await getUpdates({ allowed_updates: ['message'] });
      const future = emu.injectUpdate(bot.id, { future_update: { text: 'from the future' } });
      expect(await getUpdates()).toEqual([future]);
    });

    it('is recorded with the offset of every call', async () => {
      await getUpdates({ offset: 5, allowed_updates: ['message', 'callback_query'], timeout: 0 });
      await callApi(
        emu.apiRoot,
        bot.token,
        'getUpdates',
        {
          offset: '6',
          allowed_updates: '["message"]',
        },
        { encoding: 'query' },
      );
      const calls = emu.calls(bot.id, { method: 'getUpdates' });
      expect(calls.map((c) => c.params)).toEqual([
        { offset: 5, allowed_updates: ['message', 'callback_query'], timeout: 0 },
        { offset: 6, allowed_updates: ['message'] },
      ]);
    });
  });

  describe('update ids', () => {
    it('can restart at a lower value once nothing is pending, as after a quiet week', async () => {
      const before = emu.message(bot.id, { chatId: 1, text: 'old' });
      await getUpdates({ offset: before.update_id + 1 });
      emu.setNextUpdateId(bot.id, 1000);
      const after = emu.message(bot.id, { chatId: 1, text: 'new' });
      expect(after.update_id).toBe(1000);
      // A client still using its old offset is far ahead: Telegram answers from the head.
      expect(await getUpdates({ offset: before.update_id + 1 })).toEqual([after]);
    });

    it('refuses to go back while updates are pending', () => {
      const pending = emu.message(bot.id, { chatId: 1, text: 'pending' });
      expect(() => emu.setNextUpdateId(bot.id, pending.update_id)).toThrow(RangeError);
      expect(() => emu.injectUpdate(bot.id, { update_id: 1, message: {} })).toThrow(RangeError);
    });

    it('keeps an explicit update_id and continues from it', async () => {
      const explicit = emu.injectUpdate(bot.id, {
        update_id: 424242,
        message: { message_id: 1, chat: { id: 1, type: 'private' }, date: 0, text: 'x' },
      });
      const next = emu.message(bot.id, { chatId: 1, text: 'y' });
      expect([explicit.update_id, next.update_id]).toEqual([424242, 424243]);
      expect(await getUpdates()).toEqual([explicit, next]);
    });
  });
});
