import { owedAcrossRemoval, owedAfterAddition } from '../audit/reload-expectation';
import { AcceptanceClock } from '../harness/acceptance-clock';
import { sleep } from '../harness/app-process';
import {
  HOOK_BOT,
  LATE_ROUTE,
  POLL_BOT,
  type ChaosCluster,
  type ReloadWindow,
} from '../harness/chaos-cluster';
import type { Scenario } from './scenario';

/** After the last process logged a reload, attempts begun before it have ended by then. */
const SETTLE_MS = 1_000;

/**
 * Config reloads (rewrite the file, SIGHUP every process, one after the other) under
 * load, while `side` (answering in 150 ms) has lanes held by drain jobs and a backlog
 * (250 updates of the polling bot in one chat, 100 with --quick, just before):
 * 1. `side` is removed: ingress stops routing to it, dispatchers stop its worker and
 *    hand its lanes back untouched; its deliveries wait in Redis;
 * 2. `side` comes back well within the 5-minute grace before a removed route's lanes
 *    go dead: what waited is delivered, in lane order, before what came after;
 * 3. a route no config had (`late`) is added.
 *
 * What the audit expects of an update depends on when ingress accepted it, and each
 * replica applies a reload at its own moment. The run bounds each reload by a window
 * (its first SIGHUP to the moment the last process's "config reloaded" line was read)
 * and each update's acceptance by a span (its injection to the first moment the
 * emulator no longer had it pending: ingress enqueues before it confirms). For `side`,
 * a delivery is required when the span ends before the removal window or starts after
 * the return window, not owed at all (an arrival is stray) when it lies between the
 * two windows, and optional otherwise; for `late`, not owed before its window,
 * required after it, optional when the span meets it. Optional deliveries that arrive
 * count for lane order and duplicates like any other; one that does not is not lost.
 */
export const reloadRoutes: Scenario = {
  name: 'reload-routes',
  summary: 'reloads under load: remove side while its lanes are held, add it back, add a new route',
  async body({ cluster, quick, log }, traffic) {
    cluster.receiver('side').behaviour = () => ({ status: 204, delayMs: 150 });
    const clock = new AcceptanceClock(
      cluster.emulator,
      new Map([
        [HOOK_BOT, cluster.hookBot.id],
        [POLL_BOT, cluster.pollBot.id],
      ]),
      traffic.injected,
    );
    clock.start();
    let loading = true;
    const load = traffic.loadWhile(quick ? 60 : 100, () => loading);
    await sleep(quick ? 3_000 : 8_000);
    // A backlog in one chat's lanes (side drains it at 150 ms a delivery) is still
    // there when side goes away, and must wait for its return.
    traffic.burst(quick ? 100 : 250);
    await sleep(1_500);

    const heldAtRemoval = (await cluster.drainJobs.holders(['side'])).length;
    const removed = await cluster.reload({ without: ['side'] }, log);
    await sleep(quick ? 6_000 : 30_000);
    const waitingAtReturn = await waiting(cluster, 'side');
    const back = await cluster.reload({}, log);
    await sleep(quick ? 4_000 : 15_000);
    const added = await cluster.reload({ late: true }, log);
    await sleep(quick ? 5_000 : 20_000);
    loading = false;
    await load;

    const injected = new Map(traffic.injected.map((i) => [`${i.bot}|${i.update.update_id}`, i]));
    const expectation = (route: string, bot: string, update: { update_id: number }) => {
      const i = injected.get(`${bot}|${update.update_id}`);
      if (!i || (route !== 'side' && route !== LATE_ROUTE)) return 'required';
      return route === 'side'
        ? owedAcrossRemoval(clock.span(i), removed, back)
        : owedAfterAddition(clock.span(i), added);
    };
    const whileRemoved = () =>
      cluster
        .receiver('side')
        .arrivals.filter((a) => a.at > removed.end + SETTLE_MS && a.at < back.start).length;
    return {
      drainDeadlineMs: quick ? 120_000 : 180_000,
      lastFaultAt: added.end,
      auditConfig: cluster.config,
      expectation,
      notes: [
        `reloads applied by every process within ${describe(removed)} (side removed, ` +
          `${heldAtRemoval} of its lanes held by drain jobs), ${describe(back)} (side back ` +
          `after ${((back.start - removed.end) / 1000).toFixed(1)} s, ${waitingAtReturn} ` +
          `deliveries waiting for it) and ${describe(added)} (${LATE_ROUTE} added)`,
      ],
      checks: [
        () => {
          const n = whileRemoved();
          return n === 0
            ? undefined
            : `side got ${n} deliveries while no process had it configured`;
        },
        () => (heldAtRemoval > 0 ? undefined : 'no lane of side was held when it was removed'),
        () =>
          waitingAtReturn > 0 ? undefined : 'no delivery of side was waiting when it came back',
      ],
      cleanup: () => clock.stop(),
    };
  },
};

/** Deliveries in the route's lanes now. */
async function waiting(cluster: ChaosCluster, route: string): Promise<number> {
  const lanes = await cluster.inspect.smembers(cluster.keys.routeLanes(route));
  if (!lanes.length) return 0;
  const lengths =
    (await cluster.inspect
      .pipeline(lanes.map((lane) => ['llen', cluster.keys.lane(lane)]))
      .exec()) ?? [];
  return lengths.reduce((sum, [, n]) => sum + Number(n), 0);
}

function describe(window: ReloadWindow): string {
  return `${((window.end - window.start) / 1000).toFixed(1)} s`;
}
