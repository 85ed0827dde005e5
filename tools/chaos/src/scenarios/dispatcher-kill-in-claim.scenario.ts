import { sleep } from '../harness/app-process';
import { DISPATCHER_SLOTS, POLL_BOT } from '../harness/chaos-cluster';
import { WAVE_CHATS, chatOf } from '../harness/traffic';
import { LogMarks } from '../harness/log-marks';
import { SlotSupervisor } from '../harness/slot-supervisor';
import type { Scenario } from './scenario';
import { errorMessage } from '@relaygram/contracts';

/** Per claim of another lane's head: a wave makes a few hundred claims. */
const DIE_AFTER_CLAIM = 0.02;
/** Per yield: a burst of 250 in one chat makes a few per route. */
const DIE_AFTER_YIELD = 0.3;
/** A killed process's lanes wait for its locks: 10 s rather than 30 keeps the run short. */
const LOCK_MS = 10_000;
const DYING = 'RELAYGRAM_FAULTS: killing this process';

/**
 * The dispatchers kill themselves (SIGKILL, from RELAYGRAM_FAULTS) at the two moments a
 * crash is hardest to get right: `dispatcher-a` right after the finish-and-claim script
 * took another lane's head (begun, attempt counted, not sent), `dispatcher-b` right
 * after a drain job decided to yield a busy lane (handing it on when another waits).
 * One fault per process tells the deaths apart exactly: the log line naming the fault
 * is often lost with the process (logs are written in batches). Every second or two
 * the polling bot gets either a wave (an update in each of 300 new chats: with `side`
 * answering those in 200 ms, more of its lanes are ready than jobs wait, so jobs claim one
 * lane after another) or a burst (250 updates in one chat: a hundred deliveries in a
 * row on one lane, so jobs yield it).
 * A dead dispatcher is started again at once, as a process manager would. Its jobs'
 * locks expire, BullMQ runs them again, and a re-run takes back the lane it held
 * under a new generation and sends its head again: nothing lost, no lane out of order.
 */
export const dispatcherKillInClaim: Scenario = {
  name: 'dispatcher-kill-in-claim',
  summary: 'dispatchers die right after claiming a lane, or yielding one (RELAYGRAM_FAULTS)',
  faults: {
    [DISPATCHER_SLOTS[0]]: `die_after_claim=${DIE_AFTER_CLAIM},drain_lock_ms=${LOCK_MS}`,
    [DISPATCHER_SLOTS[1]]: `die_after_yield=${DIE_AFTER_YIELD},drain_lock_ms=${LOCK_MS}`,
  },
  async body({ cluster, quick, log }, traffic) {
    const [claimer, yielder] = cluster.dispatchers;
    if (!claimer || !yielder) throw new Error('the scenario needs two dispatchers');
    // Deliveries of a wave to `side` take 200 ms: a wave leaves many of its lanes ready
    // at once, and a job done with one claims the next. Bursts stay fast: 250 in a row
    // at 200 ms would hold one lane for 50 s.
    cluster.receiver('side').behaviour = (_arrival, update) =>
      chatOf(update) >= WAVE_CHATS ? { status: 204, delayMs: 200 } : { status: 204 };
    const marks = new LogMarks(cluster.dispatchers);
    const supervisor = new SlotSupervisor(cluster.dispatchers, log).start();
    let loading = true;
    let waves = 0;
    let bursts = 0;
    const pressure = (async () => {
      while (loading) {
        await sleep(1_000 + Math.random() * 1_000);
        if (!loading) break;
        if ((waves + bursts) % 2 === 0) {
          traffic.wave(POLL_BOT, 300);
          waves++;
        } else {
          traffic.burst(250);
          bursts++;
        }
      }
    })();
    await traffic.load(quick ? 1_200 : 12_000, quick ? 100 : 150);
    loading = false;
    await pressure;
    // The faults end with the load: the processes still running with them are replaced
    // (SIGTERM, start), so the drain is measured on clean ones. A job shutting down
    // neither claims nor yields, so they cannot die now; one that died just before is
    // started clean by the supervisor.
    for (const slot of cluster.dispatchers) slot.faults = undefined;
    await Promise.all(
      cluster.dispatchers.map(async (slot) => {
        // A start under way (after a death) may have begun with the faults: let it end.
        if (slot.startPending) await slot.start().catch(() => undefined);
        if (!slot.running || slot.runningFaults === undefined) return;
        await slot.restart().catch((error: unknown) => {
          log(`${slot.name}: restart failed: ${errorMessage(error).split('\n')[0]}`);
        });
      }),
    );
    const logged = (fault: string) => marks.count(DYING, { fault });
    return {
      drainDeadlineMs: quick ? 150_000 : 240_000,
      lastFaultAt: () => supervisor.lastDeathAt,
      cleanup: () => supervisor.stop(),
      notes: [
        () =>
          `${supervisor.deathsOf(claimer)} deaths right after a claim (${claimer.name}, ` +
          `die_after_claim=${DIE_AFTER_CLAIM}), ${supervisor.deathsOf(yielder)} right after ` +
          `a yield (${yielder.name}, die_after_yield=${DIE_AFTER_YIELD}), ${LOCK_MS / 1000} s ` +
          `drain lock; ${logged('die_after_claim') + logged('die_after_yield')} of them ` +
          `logged before the SIGKILL; ${waves} waves of 300 new chats, ${bursts} bursts of ` +
          `250 updates in one chat`,
      ],
      checks: [
        () =>
          supervisor.deathsOf(claimer) > 0 ? undefined : 'no dispatcher died right after a claim',
        () =>
          supervisor.deathsOf(yielder) > 0 ? undefined : 'no dispatcher died right after a yield',
      ],
    };
  },
};
