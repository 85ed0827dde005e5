import { request } from 'undici';
import { EmulatorControlClient } from './emulator-control-client';
import { FloodControl, isFloodLimited, validateFloodLimits } from './flood-control';
import { TelegramEmulator } from './telegram-emulator';

const T0 = 1_000_000;

describe('FloodControl', () => {
  it('lets a chat burst, then one send per interval, and says how long to wait', () => {
    const flood = new FloodControl({ perChatPerSecond: 1, chatBurst: 3 });
    const at = (t: number) => flood.check('sendMessage', { chat_id: 5, text: 'x' }, T0 + t);
    expect([at(0), at(0), at(0)]).toEqual([undefined, undefined, undefined]);
    expect(at(0)).toBe(1);
    expect(at(999)).toBe(1);
    expect(at(1000)).toBeUndefined();
    expect(at(1500)).toBe(1);
    // A refused call counts against nothing: the next second lets one through.
    expect(at(2000)).toBeUndefined();
    expect(flood.stats()).toMatchObject({ accepted: 5, limited: 3, limitedBy: { chat: 3 } });
  });

  it('holds the bot to a bucket of per_second sends across chats', () => {
    const flood = new FloodControl({ perSecond: 10 });
    const results = Array.from({ length: 12 }, (_, i) =>
      flood.check('sendMessage', { chat_id: i + 1 }, T0),
    );
    expect(results.filter((r) => r === undefined)).toHaveLength(10);
    expect(flood.check('sendPhoto', { chat_id: 99 }, T0 + 100)).toBeUndefined();
    expect(flood.stats().limitedBy).toEqual({ bot: 2, chat: 0, group: 0 });
  });

  it('holds a group or channel to per_group_per_minute in any 60 s', () => {
    const flood = new FloodControl({ perGroupPerMinute: 3 });
    for (const t of [0, 10_000, 20_000]) {
      expect(flood.check('sendMessage', { chat_id: -100 }, T0 + t)).toBeUndefined();
    }
    expect(flood.check('sendMessage', { chat_id: -100 }, T0 + 30_000)).toBe(30);
    expect(flood.check('sendMessage', { chat_id: '@News' }, T0 + 30_000)).toBeUndefined();
    expect(flood.check('sendMessage', { chat_id: 100 }, T0 + 30_000)).toBeUndefined();
    expect(flood.check('sendMessage', { chat_id: -100 }, T0 + 60_000)).toBeUndefined();
  });

  it('counts only sends and edits', () => {
    expect(
      ['sendMessage', 'copyMessage', 'forwardMessages', 'editMessageText'].every(isFloodLimited),
    ).toBe(true);
    expect(
      ['sendChatAction', 'getMe', 'answerCallbackQuery', 'deleteMessage'].some(isFloodLimited),
    ).toBe(false);
    const flood = new FloodControl({ perSecond: 1 });
    expect(flood.check('getMe', {}, T0)).toBeUndefined();
    expect(flood.check('sendChatAction', { chat_id: 1 }, T0)).toBeUndefined();
    expect(flood.check('sendMessage', { chat_id: 1 }, T0)).toBeUndefined();
    expect(flood.check('sendMessage', { chat_id: 1 }, T0)).toBe(1);
  });

  it('refuses limits it cannot enforce, naming the field', () => {
    expect(() => validateFloodLimits({ perSecond: 0 })).toThrow(
      'perSecond must be a number above 0',
    );
    expect(() => validateFloodLimits({ chatBurst: 1.5 })).toThrow('chatBurst must be an integer');
    expect(() => validateFloodLimits({ perMinute: 1 })).toThrow('unknown field perMinute');
    expect(validateFloodLimits(null)).toBeNull();
  });
});

describe('the emulator with flood limits', () => {
  let emulator: TelegramEmulator;
  beforeAll(async () => {
    emulator = await TelegramEmulator.start();
  });
  afterAll(() => emulator.stop());

  it("answers a send over a limit with Telegram's 429", async () => {
    const bot = emulator.addBot({ floodLimits: { perChatPerSecond: 1, chatBurst: 1 } });
    const send = () =>
      request(`${emulator.apiRoot}/bot${bot.token}/sendMessage`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ chat_id: 42, text: 'hi' }),
      });
    expect((await send()).statusCode).toBe(200);
    const limited = await send();
    expect(limited.statusCode).toBe(429);
    expect(await limited.body.json()).toEqual({
      ok: false,
      error_code: 429,
      description: 'Too Many Requests: retry after 1',
      parameters: { retry_after: 1 },
    });
    expect(emulator.floodStats(bot.id)).toMatchObject({ accepted: 1, limited: 1 });
    expect(emulator.sent(bot.id).map((c) => c.status)).toEqual([200, 429]);
  });

  it('takes limits and reports counts over the control API', async () => {
    const control = new EmulatorControlClient(emulator.controlUrl);
    const bot = await control.addBot({ floodLimits: { perSecond: 2 } });
    expect(await control.floodStats(bot.id)).toMatchObject({
      limits: { perSecond: 2 },
      accepted: 0,
    });
    await control.setFloodLimits(bot.id, { perGroupPerMinute: 1 });
    for (let i = 0; i < 2; i++) {
      await request(`${emulator.apiRoot}/bot${bot.token}/sendMessage?chat_id=-5&text=x`).then((r) =>
        r.body.dump(),
      );
    }
    expect(await control.floodStats(bot.id)).toMatchObject({
      limits: { perGroupPerMinute: 1 },
      accepted: 1,
      limited: 1,
      limitedBy: { group: 1 },
    });
    await control.setFloodLimits(bot.id, null);
    expect(await control.floodStats(bot.id)).toBeUndefined();
    await expect(control.setFloodLimits(bot.id, { chatBurst: -1 })).rejects.toThrow(
      'chatBurst must be a number above 0',
    );
  });
});
