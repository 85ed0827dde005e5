import { autoRetry } from '@grammyjs/auto-retry';
import type { RecordedCall } from '@relaygram/testing';
import { Bot } from 'grammy';
import { Telegraf } from 'telegraf';
import { startGatewayHarness, type GatewayHarness } from './gateway-harness';

const CHATS = [7001, 7002, 7003];
const MESSAGES = 300;
// Raised from Telegram's limits for test speed. The gateway paces to these; the emulator
// allows sends that land late by up to a quarter of a second on top (a busy event loop
// in this one process running the gateway, the emulator and the bot bunches arrivals
// that left a slot apart), as Telegram's own limits are not exact either.
const PER_SECOND = 60;
const PER_CHAT = 20;
const BURST = 5;
const LATE_BY_MS = 250;
const ARRIVAL_SLACK = (PER_CHAT * LATE_BY_MS) / 1000;

/**
 * Bot frameworks sending through the drop-in, as fast as they can: 300 messages to 3
 * chats at once. Every one arrives once, and the emulator, enforcing the same limits
 * as the gateway's config on its own clock, never has to answer a 429: the pace is
 * the gateway's. grammY meets the gateway's own 429s (a short max_wait) and its
 * auto-retry plugin does the rest; Telegraf has none, so its bot waits longer.
 */
describe('bot frameworks at full speed through the paced drop-in', () => {
  let h: GatewayHarness;
  const limits = { per_second: PER_SECOND, per_chat_per_second: PER_CHAT, chat_burst: BURST };

  beforeAll(async () => {
    h = await startGatewayHarness({
      outbound: { ...limits, max_wait: '1s' },
      otherOutbound: { ...limits, max_wait: '15s' },
    });
    const flood = {
      perSecond: (PER_SECOND * (1000 + LATE_BY_MS)) / 1000,
      perChatPerSecond: PER_CHAT,
      chatBurst: BURST + ARRIVAL_SLACK,
    };
    h.emulator.setFloodLimits(h.main.id, flood);
    h.emulator.setFloodLimits(h.other.id, flood);
  });
  afterAll(() => h.close());

  /** Every text sent, arrived exactly once, at the configured pace on the emulator's clock. */
  function expectPaced(botId: number, texts: string[]): void {
    const calls = h.emulator.sent(botId, { method: 'sendMessage' });
    expect(h.emulator.floodStats(botId)).toMatchObject({ limited: 0, accepted: MESSAGES });
    expect(calls.filter((c) => c.status !== 200)).toEqual([]);
    const arrived = calls.map((c) => String(c.params['text'])).sort();
    expect(arrived).toEqual([...texts].sort());
    for (const chat of CHATS) {
      const times = calls.filter((c) => c.params['chat_id'] === chat).map((c) => c.time);
      expect(times).toHaveLength(MESSAGES / CHATS.length);
      // 100 messages to one chat at 20 a second: about 5 s, not all at once.
      expect(times[times.length - 1]! - times[0]!).toBeGreaterThanOrEqual(
        ((MESSAGES / CHATS.length - BURST) / PER_CHAT) * 1000 - 50,
      );
      expect(maxInWindow(times, 1000)).toBeLessThanOrEqual(PER_CHAT + BURST + ARRIVAL_SLACK);
    }
    expect(
      maxInWindow(
        calls.map((c: RecordedCall) => c.time),
        1000,
      ),
    ).toBeLessThanOrEqual(2 * PER_SECOND);
  }

  it('grammY with auto-retry: all 300 arrive, at the pace, none twice', async () => {
    const bot = new Bot(h.dropInToken(h.main), { client: { apiRoot: h.url } });
    bot.api.config.use(autoRetry());
    const texts = Array.from({ length: MESSAGES }, (_, i) => `grammY #${i}`);
    const sent = await Promise.all(
      texts.map((text, i) => bot.api.sendMessage(CHATS[i % CHATS.length] as number, text)),
    );
    expect(sent.map((m) => m.text).sort()).toEqual([...texts].sort());
    expectPaced(h.main.id, texts);
    // The gateway did refuse some (max_wait 1 s), and grammY retried them after retry_after.
    const refused = await (await fetch(`${h.running.adminUrl}/metrics`)).text();
    expect(refused).toMatch(/relaygram_outbound_paced_total\{bot="main-bot",budget="[a-z]+"/);
  }, 90_000);

  it('Telegraf: all 300 arrive, at the pace, none refused', async () => {
    const bot = new Telegraf(h.dropInToken(h.other), { telegram: { apiRoot: h.url } });
    const texts = Array.from({ length: MESSAGES }, (_, i) => `Telegraf #${i}`);
    const sent = await Promise.all(
      texts.map((text, i) => bot.telegram.sendMessage(CHATS[i % CHATS.length] as number, text)),
    );
    expect(sent.map((m) => m.text).sort()).toEqual([...texts].sort());
    expectPaced(h.other.id, texts);
  }, 90_000);
});

/** The most arrivals in any window of `ms`. */
function maxInWindow(times: number[], ms: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while (sorted[end]! - sorted[start]! >= ms) start++;
    most = Math.max(most, end - start + 1);
  }
  return most;
}
