import { TelegramEmulator, type RecordedCall } from '@relaygram/testing';
import { serveChild } from './child-runtime';

/** The Telegram emulator in a process of its own, standing in for api.telegram.org. */
let emulator: TelegramEmulator | undefined;

/** Counts of one broadcast's sends as they reach the emulator (see watchBroadcast). */
interface BroadcastWatch {
  text: string;
  /** Sends answered 200 or 403 per 100 ms of the emulator's clock, from `firstAt`. */
  bins: number[];
  firstAt?: number;
  lastAt?: number;
  sent: number;
  blocked: number;
  /** Answered 429 by the emulator's flood limits. */
  limited: number;
  stop: () => void;
}

let watch: BroadcastWatch | undefined;

async function start(): Promise<{ apiRoot: string }> {
  // Small rings: the gateway benchmark sends hundreds of thousands of messages.
  emulator = await TelegramEmulator.start({ historyLimit: 1000, messageLimit: 1000 });
  return { apiRoot: emulator.apiRoot };
}

function addBot({ username }: { username: string }): { token: string; id: number } {
  if (!emulator) throw new Error('emulator not started');
  const bot = emulator.addBot({ username });
  return { token: bot.token, id: bot.id };
}

/**
 * Telegram's per-bot limit raised to `perSecond`, the chats `blocked` made to answer
 * 403, and the `sendMessage` calls of `text` counted per 100 ms as they are answered:
 * more than the call ring keeps.
 */
function watchBroadcast(spec: {
  botId: number;
  perSecond: number;
  blocked: number[];
  text: string;
}): { ok: true } {
  if (!emulator) throw new Error('emulator not started');
  watch?.stop();
  emulator.setFloodLimits(spec.botId, { perSecond: spec.perSecond });
  emulator.blockChats(spec.botId, spec.blocked);
  const counts: Omit<BroadcastWatch, 'stop'> = {
    text: spec.text,
    bins: [],
    sent: 0,
    blocked: 0,
    limited: 0,
  };
  const stop = emulator.watchCalls(spec.botId, (call: RecordedCall) => {
    if (call.method !== 'sendMessage' || call.params.text !== spec.text) return;
    if (call.status === 429) counts.limited++;
    else if (call.status === 200 || call.status === 403) {
      // Both took a slot of the bot's budget: the rate counts them alike.
      if (call.status === 200) counts.sent++;
      else counts.blocked++;
      counts.firstAt ??= call.time;
      counts.lastAt = call.time;
      const bin = Math.floor((call.time - counts.firstAt) / 100);
      while (counts.bins.length <= bin) counts.bins.push(0);
      counts.bins[bin]++;
    }
  });
  watch = Object.assign(counts, { stop });
  return { ok: true };
}

/** What the watch counted so far; `end` also lifts its limits and blocks. */
function broadcastCounts(spec: { botId: number; end?: boolean }): Omit<BroadcastWatch, 'stop'> {
  if (!emulator || !watch) throw new Error('no broadcast watched');
  const { stop, ...counts } = watch;
  if (spec.end) {
    stop();
    emulator.setFloodLimits(spec.botId, null);
    emulator.unblockChats(spec.botId);
    watch = undefined;
  }
  return { ...counts, bins: [...counts.bins] };
}

serveChild({ start, addBot, watchBroadcast, broadcastCounts }, async () => {
  await emulator?.stop();
});
