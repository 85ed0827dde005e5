import { laneId } from '@relaygram/contracts';
import { laneKeyFor } from '@relaygram/routing';
import { deliveryKey } from '../audit/delivery-audit';
import { sleep, type AppSlot } from '../harness/app-process';
import { DISPATCHER_SLOTS, type ChaosCluster } from '../harness/chaos-cluster';
import type { LaneHolder } from '../harness/drain-jobs';
import { LogMarks, type LogLine } from '../harness/log-marks';
import type { InjectedUpdate } from '../harness/traffic';
import type { Scenario } from './scenario';

/** The dispatchers' drain lock in this scenario, so a pause outlives it in seconds. */
const LOCK_MS = 5_000;
const LOST_LOCK = 'drain job lost its lock';
const REFUSED = 'drain job refused by Redis';

/**
 * A dispatcher holding lanes under load is stopped with SIGSTOP (a frozen VM, a starved
 * container) for longer than its drain lock, then continued with SIGCONT. Meanwhile
 * its locks expire and BullMQ's stalled check (every 15 s) gives its jobs to the other
 * replica, which takes their lanes under new generations. Woken up, the zombie must
 * change nothing: a job checks its lock before sending ("lost its lock"), and every
 * lane script it runs is refused by the lock and generation fence ("refused by Redis").
 * The pause lasts until every job it held runs elsewhere (or 45 s), so the zombie wakes
 * up behind lanes that moved on: a send of its would be out of order.
 */
export const dispatcherSigstop: Scenario = {
  name: 'dispatcher-sigstop',
  summary: `SIGSTOP a dispatcher holding lanes past its drain lock (${LOCK_MS / 1000} s), then SIGCONT`,
  faults: Object.fromEntries(DISPATCHER_SLOTS.map((slot) => [slot, `drain_lock_ms=${LOCK_MS}`])),
  async body({ cluster, quick, log }, traffic) {
    // A slow-ish route keeps lanes held by drain jobs at any moment.
    cluster.receiver('side').behaviour = () => ({ status: 204, delayMs: 150 });
    let loading = true;
    const load = traffic.loadWhile(quick ? 60 : 100, () => loading);
    await sleep(quick ? 4_000 : 15_000);

    const { victim, held } = await pickVictim(cluster);
    const marks = new LogMarks([victim]);
    victim.signal('SIGSTOP');
    const stoppedAt = Date.now();
    log(`dispatcher-sigstop: ${victim.name} stopped holding ${held.length} lanes`);
    const takenOverAfter = await waitForTakeOver(cluster, held, stoppedAt, quick);
    const contOffset = new LogMarks([victim]);
    victim.signal('SIGCONT');
    const wokeAt = Date.now();
    const pausedMs = wokeAt - stoppedAt;
    log(`dispatcher-sigstop: ${victim.name} continued after ${(pausedMs / 1000).toFixed(1)} s`);
    await sleep(quick ? 5_000 : 20_000);
    loading = false;
    await load;

    const laneOf = laneResolver(cluster, traffic.injected);
    const afterWake = () =>
      afterTheWake(contOffset.lines(victim), held, laneOf, { stoppedAt, pausedMs });
    return {
      drainDeadlineMs: quick ? 120_000 : 180_000,
      lastFaultAt: wokeAt,
      notes: [
        `${victim.name} stopped holding ${held.length} lanes (${describeHeld(held)}), for ` +
          `${(pausedMs / 1000).toFixed(1)} s with a ${LOCK_MS / 1000} s drain lock`,
        takenOverAfter === undefined
          ? `not every job it held ran elsewhere before the SIGCONT`
          : `every job it held ran elsewhere ${(takenOverAfter / 1000).toFixed(1)} s after the SIGSTOP`,
        () => {
          const woke = afterWake();
          return (
            `woken, it logged ${woke.lost} "${LOST_LOCK}" and ${woke.refused} "${REFUSED}" ` +
            `lines; on the lanes it held, ${woke.inFlight} attempts on the wire at the ` +
            `SIGSTOP ended after the wake, ${woke.sentAfterWake} were begun after it` +
            (woke.silent ? `, ${woke.silent} jobs logged no refusal` : '')
          );
        },
        () =>
          `${marks.count('drain job failed', {}, victim)} drain jobs of the woken process failed in BullMQ`,
      ],
      checks: [
        () => {
          const woke = afterWake();
          return woke.lost + woke.refused > 0
            ? undefined
            : `${victim.name} held ${held.length} lanes but logged no refusal after it woke: ` +
                `its jobs cannot have met the fence`;
        },
        () => {
          const { sentAfterWake } = afterWake();
          return sentAfterWake === 0
            ? undefined
            : `woken, ${victim.name} sent ${sentAfterWake} deliveries on lanes it had lost`;
        },
      ],
    };
  },
};

interface AfterWake {
  /** "lost its lock" lines. */
  lost: number;
  /** "refused by Redis" lines. */
  refused: number;
  /** Attempts on a held lane on the wire at the SIGSTOP, ended after the wake. */
  inFlight: number;
  /** Attempts on a held lane begun after the wake: sends on a lane the job had lost. */
  sentAfterWake: number;
  /** Held jobs that logged no refusal. */
  silent: number;
}

/** What the woken process logged, from its SIGCONT on, about the jobs it held. */
function afterTheWake(
  lines: LogLine[],
  held: readonly LaneHolder[],
  laneOf: (route: string, bot: string, updateId: number) => string | undefined,
  pause: { stoppedAt: number; pausedMs: number },
): AfterWake {
  const fenced = (l: LogLine) =>
    String(l.msg).includes(LOST_LOCK) || String(l.msg).includes(REFUSED);
  // What each job it held did on its lane after the wake, until it met the fence
  // (its first act once woken). An attempt that ends then and began before the
  // SIGSTOP was on the wire when the process froze; one that began after it can only
  // have begun after the wake (nothing runs while stopped): a send on a lane the job
  // had lost.
  let inFlight = 0;
  let sentAfterWake = 0;
  let silent = 0;
  for (const h of held) {
    const end = lines.findIndex((l) => l.job === h.jobId && fenced(l));
    if (end < 0) {
      silent++;
      continue;
    }
    for (const l of lines.slice(0, end)) {
      if (typeof l.outcome !== 'string' || typeof l.ms !== 'number') continue;
      if (laneOf(String(l.route), String(l.bot), Number(l.update_id)) !== h.lane) continue;
      // Halfway through the pause: clear of the log's millisecond rounding either way.
      if (Date.parse(String(l.time)) - l.ms > pause.stoppedAt + pause.pausedMs / 2) {
        sentAfterWake++;
      } else inFlight++;
    }
  }
  return {
    lost: lines.filter((l) => String(l.msg).includes(LOST_LOCK)).length,
    refused: lines.filter((l) => String(l.msg).includes(REFUSED)).length,
    inFlight,
    sentAfterWake,
    silent,
  };
}

/** The live dispatcher holding the most lanes (waiting up to 20 s for one holding 3). */
async function pickVictim(cluster: ChaosCluster): Promise<{ victim: AppSlot; held: LaneHolder[] }> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const holders = await cluster.drainJobs.holders(cluster.routeNames);
    let best: { victim: AppSlot; held: LaneHolder[] } | undefined;
    for (const slot of cluster.dispatchers) {
      if (!slot.running) continue;
      const held = holders.filter((h) => h.pid === slot.pid && h.token !== undefined);
      if (!best || held.length > best.held.length) best = { victim: slot, held };
    }
    if (best && (best.held.length >= 3 || Date.now() > deadline)) return best;
    await sleep(100);
  }
}

/**
 * Waits until every job the stopped process held has a lock of another run or is gone
 * (re-run and finished elsewhere), at least twice the lock, at most 45 s (40 s quick):
 * the stalled check runs every 15 s and moves a job at its second look.
 * Returns how long that took from the stop, or undefined at the deadline.
 */
async function waitForTakeOver(
  cluster: ChaosCluster,
  held: readonly LaneHolder[],
  stoppedAt: number,
  quick: boolean,
): Promise<number | undefined> {
  const deadline = stoppedAt + (quick ? 40_000 : 45_000);
  let takenAt: number | undefined;
  for (;;) {
    if (takenAt === undefined) {
      const locks = await cluster.drainJobs.locks(held);
      const moved = locks.every(
        (lock, i) => !lock.exists || (lock.token !== undefined && lock.token !== held[i]?.token),
      );
      if (moved) takenAt = Date.now();
    }
    const minimum = stoppedAt + 2 * LOCK_MS;
    if (Date.now() >= minimum && (takenAt !== undefined || Date.now() >= deadline)) {
      return takenAt === undefined ? undefined : takenAt - stoppedAt;
    }
    await sleep(250);
  }
}

function describeHeld(held: readonly LaneHolder[]): string {
  const byRoute = new Map<string, number>();
  for (const h of held) byRoute.set(h.route, (byRoute.get(h.route) ?? 0) + 1);
  return [...byRoute].map(([route, n]) => `${route} ${n}`).join(', ');
}

/** The lane of a delivery named in a log line (route, bot, update_id); undefined for `none`. */
function laneResolver(
  cluster: ChaosCluster,
  injected: readonly InjectedUpdate[],
): (route: string, bot: string, updateId: number) => string | undefined {
  const updates = new Map(injected.map((i) => [`${i.bot}|${i.update.update_id}`, i.update]));
  return (route, bot, updateId) => {
    const config = cluster.config.routes.find((r) => r.name === route);
    const update = updates.get(`${bot}|${updateId}`);
    if (!config || !update) return undefined;
    const key = laneKeyFor(config.ordering, update, deliveryKey(route, bot, updateId));
    return key.kind === 'single' ? undefined : laneId(route, bot, key);
  };
}
