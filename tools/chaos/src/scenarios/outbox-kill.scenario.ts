import { errorMessage } from '@relaygram/contracts';
import { auditOutbox, type OutboxAudit } from '../audit/outbox-audit';
import { sleep } from '../harness/app-process';
import { HOOK_BOT, type ChaosCluster } from '../harness/chaos-cluster';
import { DispatcherKills } from '../harness/dispatcher-kills';
import { OutboxTraffic } from '../harness/outbox-traffic';
import type { Scenario } from './scenario';

/** Sends read back with GET .../outbox/:id at the end. */
const STATUS_SAMPLE = 50;
/**
 * A POST without its 202 is given up this long after the plan's end. A gateway killed
 * while it held a request's Idempotency-Key leaves the key leased (10 s for an outbox
 * send), and the repeat of that request is answered 409 until then; Redis or the
 * gateway restarting add their own seconds.
 */
const GIVE_UP_AFTER_MS = 60_000;

/**
 * Outbox sends (`POST /api/v1/hook-bot/outbox`, `sendMessage` of `o<n>`, each with its
 * own Idempotency-Key, a chat's next send posted once its previous one got its 202)
 * beside a small update load, while a random dispatcher is killed with SIGKILL every
 * 2-4 s (started again at once) and the gateway once or twice (started again a second
 * later). What Telegram (the emulator) answered 200 is then held to docs/guarantees.md
 * "Outbox sends": every accepted send made, in acceptance order per chat, a send made
 * twice only as its lane's head again (its copies next to each other in its chat),
 * nothing made that was never accepted, and the records read `sent`.
 */
export const outboxKill: Scenario = {
  name: 'outbox-kill',
  summary: 'kill -9 dispatchers and the gateway while outbox sends are posted and made',
  async body({ cluster, quick, log }, traffic) {
    const outbox = new OutboxTraffic(cluster, {
      bot: HOOK_BOT,
      sends: quick ? 600 : 3_000,
      chats: quick ? 60 : 200,
      // The chaos bots' default pacing (30 per second per bot) makes the sends.
      perSecond: 30,
      giveUpAfterMs: GIVE_UP_AFTER_MS,
    });
    const posting = outbox.run();
    const kills = new DispatcherKills(cluster, () => 2_000 + Math.random() * 2_000);
    const gateway = gatewayKills(cluster, quick ? [0.4] : [0.3, 0.65], outbox.planMs, log);
    await Promise.all([traffic.load(quick ? 600 : 4_000, 100), sleep(outbox.planMs)]);
    await kills.stop();
    const gatewayBackAt = await gateway.done;
    await posting;
    const lastFaultAt = Math.max(kills.lastKill ?? 0, gatewayBackAt ?? 0) || undefined;
    const postingEndedAt = outbox.postingEndedAt ?? Date.now();
    log(
      `outbox-kill: ${outbox.accepted.length}/${outbox.posts.length} outbox sends accepted, ` +
        `the last ${((postingEndedAt - (lastFaultAt ?? postingEndedAt)) / 1000).toFixed(1)} s after the last fault`,
    );

    return {
      drainDeadlineMs: quick ? 150_000 : 240_000,
      lastFaultAt,
      checks: outboxChecks(outbox, kills, gateway, postingEndedAt + (quick ? 90_000 : 120_000)),
      notes: outboxNotes(outbox, kills, gateway, lastFaultAt),
    };
  },
};

/** Kills made by the scenario, read once it is over. */
interface Faults {
  kills: number;
}

/**
 * The faults happened, every send got its 202, and what Telegram answered 200 (once
 * every accepted send was made, or `deadline` passed) keeps the outbox's guarantee.
 */
function outboxChecks(
  outbox: OutboxTraffic,
  dispatcherKills: Faults,
  gatewayKills: Faults,
  deadline: number,
): (() => string | undefined | Promise<string | undefined>)[] {
  let settled: Promise<OutboxAudit> | undefined;
  // Once, by the first check that needs it: every accepted send made, or the deadline.
  const audit = () => (settled ??= outbox.waitAllMade(deadline).then(() => auditNow(outbox)));
  const failed = (what: string, list: readonly string[]) =>
    list.length === 0
      ? undefined
      : `${list.length} ${what}: ${list.slice(0, 5).join('; ')}${list.length > 5 ? '...' : ''}`;
  return [
    () => (dispatcherKills.kills > 0 ? undefined : 'no dispatcher was killed'),
    () => (gatewayKills.kills > 0 ? undefined : 'the gateway was never killed'),
    () =>
      failed(
        'outbox sends never got their 202',
        outbox.posts.filter((p) => p.id === undefined).map((p) => `o${p.n}: ${p.lastRefusal}`),
      ),
    async () =>
      failed(
        'accepted outbox sends never made',
        (await audit()).lost.map((n) => `o${n}`),
      ),
    async () => failed('outbox sends out of order', (await audit()).orderViolations),
    async () => failed('outbox duplicates outside the window', (await audit()).splitDuplicates),
    async () => failed('outbox sends made though never accepted', (await audit()).stray),
    async () => {
      const sample = [...outbox.accepted].sort(() => Math.random() - 0.5).slice(0, STATUS_SAMPLE);
      const wrong: string[] = [];
      for (const post of sample) {
        try {
          const view = (await outbox.status(post)) as { status?: unknown };
          if (view.status !== 'sent') wrong.push(`o${post.n}: ${String(view.status)}`);
        } catch (error) {
          wrong.push(`o${post.n}: ${errorMessage(error)}`);
        }
      }
      return failed(`of ${sample.length} outbox records read not sent`, wrong);
    },
  ];
}

/** Sends accepted, made and made again; the kills and the POSTs' answers; the time after the last fault. */
function outboxNotes(
  outbox: OutboxTraffic,
  dispatcherKills: Faults,
  gatewayKills: Faults,
  lastFaultAt: number | undefined,
): (() => string)[] {
  return [
    () => {
      const { accepted, made, duplicates } = auditNow(outbox);
      return (
        `outbox: ${accepted} sends accepted, ${made} made, ${duplicates} made again ` +
        `(the head in flight when its dispatcher died)`
      );
    },
    () => {
      const refusals = [...outbox.refusals]
        .sort(([a], [b]) => a - b)
        .map(([status, n]) => `${n}x ${status === 0 ? 'no answer' : status}`)
        .join(', ');
      const slowest = outbox.slowest();
      return (
        `${dispatcherKills.kills} dispatchers and the gateway ${gatewayKills.kills} times killed ` +
        `with SIGKILL; POSTs answered other than 202: ${refusals || 'none'}` +
        (slowest
          ? `; longest wait for a 202: ${(slowest.ms / 1000).toFixed(1)} s ` +
            `(o${slowest.post.n}, ${slowest.post.tries} POSTs)`
          : '')
      );
    },
    () => {
      const last = Math.max(0, ...outbox.made().map((m) => m.time));
      return lastFaultAt === undefined || last === 0
        ? 'no outbox send made'
        : `last outbox send made ${((last - lastFaultAt) / 1000).toFixed(1)} s after the last fault`;
    },
  ];
}

/** The audit of the sends accepted so far against the emulator's calls as they are now. */
function auditNow(outbox: OutboxTraffic): OutboxAudit {
  const accepted = new Map(
    [...outbox.acceptedByChat()].map(([chat, posts]) => [chat, posts.map((p) => p.n)]),
  );
  return auditOutbox(accepted, outbox.made());
}

/**
 * kill -9 the gateway at each share of `planMs` in `at`, and start it again a second
 * later. `done` resolves with when it was last back.
 */
function gatewayKills(
  cluster: ChaosCluster,
  at: readonly number[],
  planMs: number,
  log: (line: string) => void,
): { kills: number; done: Promise<number | undefined> } {
  const state = { kills: 0, done: Promise.resolve<number | undefined>(undefined) };
  const started = Date.now();
  state.done = (async () => {
    let backAt: number | undefined;
    for (const share of at) {
      const due = started + share * planMs;
      if (due > Date.now()) await sleep(due - Date.now());
      await cluster.gateway.kill9();
      state.kills++;
      await sleep(1_000);
      await cluster.gateway
        .start()
        .catch((error: unknown) => log(`restart of the gateway failed: ${errorMessage(error)}`));
      backAt = Date.now();
    }
    return backAt;
  })();
  return state;
}
