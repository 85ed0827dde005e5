import type { FloodStats, RecordedCall } from '@relaygram/testing';
import { errorMessage } from '@relaygram/contracts';
import { auditOutbox, type OutboxAudit } from '../audit/outbox-audit';
import { sleep } from '../harness/app-process';
import { HOOK_BOT } from '../harness/chaos-cluster';
import { OutboxTraffic } from '../harness/outbox-traffic';
import { TelegramFaults } from '../harness/telegram-faults';
import type { Scenario } from './scenario';

/** Telegram's limits (../shared/TELEGRAM.md), as the hook bot's default `outbound` paces. */
const TELEGRAM_LIMITS = { perSecond: 30, perChatPerSecond: 1, chatBurst: 3, perGroupPerMinute: 20 };
/** The share of the bot's sendMessage calls that meet a forced fault. */
const FAULT_SHARE = 0.08;
/** Records read back at the end in the full run (the quick run reads every one). */
const STATUS_SAMPLE = 500;

/**
 * Issue 16's outbox acceptance run: 10,000 outbox sends to 200 chats (1,000 to 50 in
 * the quick run), with the emulator enforcing Telegram's flood limits on the bot and
 * answering, at random, about one call in twelve with a 429 (retry_after 1-3 s), a 5xx or
 * a dropped connection. No process is killed. Every send must arrive once (a dropped
 * call never reaches the chat), in its chat's order; the emulator's own limits must
 * answer no 429 (the pacing kept to them through the retries); every record read back
 * must say `sent`, with at least as many attempts as the calls Telegram saw.
 */
export const outboxFaults: Scenario = {
  name: 'outbox-faults',
  summary: "outbox sends through Telegram's limits and random 429s, 5xx and dropped connections",
  async body({ cluster, quick }, traffic) {
    const { emulator, hookBot } = cluster;
    emulator.setFloodLimits(hookBot.id, TELEGRAM_LIMITS);
    const faults = new TelegramFaults(emulator, hookBot.id, 'sendMessage', FAULT_SHARE);
    const outbox = new OutboxTraffic(cluster, {
      bot: HOOK_BOT,
      sends: quick ? 1_000 : 10_000,
      chats: quick ? 50 : 200,
      perSecond: TELEGRAM_LIMITS.perSecond,
      giveUpAfterMs: 60_000,
    });
    faults.start();
    const posting = outbox.run();
    await Promise.all([traffic.load(quick ? 300 : 1_000, 20), sleep(outbox.planMs)]);
    await posting;
    // The sends still queued meet faults until the last is made (or the deadline).
    const allMade = await outbox.waitAllMade(Date.now() + (quick ? 90_000 : 180_000));
    faults.stop();
    const flood = emulator.floodStats(hookBot.id);
    emulator.setFloodLimits(hookBot.id, null);
    return {
      drainDeadlineMs: quick ? 60_000 : 120_000,
      lastFaultAt: faults.stoppedAt,
      checks: checks(outbox, allMade, flood, quick),
      notes: [() => notes(outbox, faults, flood)],
    };
  },
};

function checks(
  outbox: OutboxTraffic,
  allMade: boolean,
  flood: FloodStats | undefined,
  quick: boolean,
): (() => string | undefined | Promise<string | undefined>)[] {
  const audit = auditNow(outbox);
  const failed = (what: string, list: readonly string[]) =>
    list.length === 0
      ? undefined
      : `${list.length} ${what}: ${list.slice(0, 5).join('; ')}${list.length > 5 ? '...' : ''}`;
  return [
    () => {
      const met = answersOf(outbox);
      const missing = (['429', '5xx', 'drop'] as const).filter((kind) => met[kind] === 0);
      return missing.length === 0 ? undefined : `no outbox send met a forced ${missing.join(', ')}`;
    },
    () => {
      if (!flood) return "the emulator's flood limits were not in force";
      const by = flood.limitedBy;
      return flood.limited === 0
        ? undefined
        : `the emulator's own limits answered ${flood.limited} 429s (bot ${by.bot}, chat ${by.chat}, group ${by.group})`;
    },
    () =>
      failed(
        'outbox sends never got their 202',
        outbox.posts.filter((p) => p.id === undefined).map((p) => `o${p.n}: ${p.lastRefusal}`),
      ),
    () => (allMade ? undefined : 'the deadline passed before every accepted send was made'),
    () =>
      failed(
        'accepted outbox sends never made',
        audit.lost.map((n) => `o${n}`),
      ),
    () => failed('outbox sends out of order', audit.orderViolations),
    () => failed('outbox sends made more than once', duplicatesOf(audit)),
    () => failed('outbox sends made though never accepted', audit.stray),
    async () =>
      failed('outbox records not as Telegram saw them', await wrongRecords(outbox, quick)),
  ];
}

/** Without a kill, no send is made twice: a dropped call never reached its chat. */
function duplicatesOf(audit: OutboxAudit): string[] {
  return audit.duplicates === 0 ? [] : [`${audit.duplicates} copies`, ...audit.splitDuplicates];
}

/** Each record read back: `sent`, and at least one attempt per call Telegram saw. */
async function wrongRecords(outbox: OutboxTraffic, quick: boolean): Promise<string[]> {
  const callsOf = new Map<number, number>();
  for (const call of sendCalls(outbox)) {
    const n = outbox.numberOf(call);
    if (n !== undefined) callsOf.set(n, (callsOf.get(n) ?? 0) + 1);
  }
  const accepted = outbox.accepted;
  const read = quick
    ? accepted
    : [...accepted].sort(() => Math.random() - 0.5).slice(0, STATUS_SAMPLE);
  const wrong: string[] = [];
  for (const post of read) {
    try {
      const view = (await outbox.status(post)) as { status?: unknown; attempts?: unknown };
      const calls = callsOf.get(post.n) ?? 0;
      if (view.status !== 'sent') wrong.push(`o${post.n}: ${String(view.status)}`);
      else if (typeof view.attempts !== 'number' || view.attempts < calls) {
        wrong.push(`o${post.n}: ${String(view.attempts)} attempts for ${calls} calls`);
      }
    } catch (error) {
      wrong.push(`o${post.n}: ${errorMessage(error)}`);
    }
  }
  return wrong;
}

function notes(
  outbox: OutboxTraffic,
  faults: TelegramFaults,
  flood: FloodStats | undefined,
): string {
  const { accepted, made } = auditNow(outbox);
  const met = answersOf(outbox);
  const placed = [...faults.placed].map(([kind, n]) => `${n} ${kind}`).join(', ');
  return (
    `outbox: ${accepted} sends accepted, ${made} made; Telegram answered them ` +
    `${met.ok} 200, ${met['429']} 429, ${met['5xx']} 5xx, ${met.drop} dropped ` +
    `(faults placed: ${placed || 'none'}); the emulator's own limits let ` +
    `${flood?.accepted ?? 0} sending calls through and answered ${flood?.limited ?? 0} 429s`
  );
}

/** How Telegram answered the calls of this traffic's sends. */
function answersOf(outbox: OutboxTraffic): Record<'ok' | '429' | '5xx' | 'drop', number> {
  const met = { ok: 0, '429': 0, '5xx': 0, drop: 0 };
  for (const call of sendCalls(outbox)) {
    if (call.status === 200) met.ok++;
    else if (call.status === 429) met['429']++;
    else if (call.status === 0) met.drop++;
    else if ((call.status ?? 0) >= 500) met['5xx']++;
  }
  return met;
}

/** The bot's answered sendMessage calls of this traffic's chats and texts. */
function sendCalls(outbox: OutboxTraffic): RecordedCall[] {
  const chats = new Set(outbox.chatIds);
  return outbox.cluster.emulator
    .calls(outbox.cluster.hookBot.id, { method: 'sendMessage' })
    .filter(
      (call) =>
        call.status !== undefined &&
        chats.has(Number(call.params.chat_id)) &&
        outbox.numberOf(call) !== undefined,
    );
}

function auditNow(outbox: OutboxTraffic): OutboxAudit {
  const accepted = new Map(
    [...outbox.acceptedByChat()].map(([chat, posts]) => [chat, posts.map((p) => p.n)]),
  );
  return auditOutbox(accepted, outbox.made());
}
