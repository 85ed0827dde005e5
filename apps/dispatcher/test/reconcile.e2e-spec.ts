import { ConfigService } from '@relaygram/config';
import { Queue } from 'bullmq';
import {
  DeadReason,
  JobName,
  QueueName,
  drainJobId,
  laneId,
  type DrainLaneJob,
} from '@relaygram/contracts';
import { encodeEntry, newDeliveryId, readRouteStats } from '@relaygram/queue';
import { type RecordingReceiver, eventually, updateIdOf } from '@relaygram/testing';
import {
  DispatcherHarness,
  harnessEachTest,
  messageUpdate,
  sleep,
} from './support/dispatcher-harness';

describe('dispatcher: reconciliation', () => {
  let h: DispatcherHarness;
  let receiver: RecordingReceiver;

  harnessEachTest(
    'reconcile',
    (harness, rx) => {
      h = harness;
      receiver = rx;
    },
    (harness) => {
      for (const name of Object.keys(harness.env)) delete process.env[name];
    },
  );

  /** The first attempt is told to come back in 3 s: its lane backs off meanwhile. */
  function answer429Once(): void {
    let first = true;
    receiver.respondWith(() => {
      if (first) {
        first = false;
        return { status: 429, headers: { 'retry-after': '3' } };
      }
      return { status: 204 };
    });
  }

  /**
   * Deletes the job that would wake the route's backed-off lane (it waits in BullMQ's
   * delayed set until the head's next attempt): only a reconcile can restart the lane.
   */
  async function removeWakeJob(route: string): Promise<void> {
    const queue = h.fixture.scheduler.queue(route);
    await eventually(async () => (await queue.getDelayed()).length > 0, {
      what: 'the wake job delayed by the retry',
    });
    for (const job of await queue.getDelayed()) await job.remove();
    expect(await queue.getDelayed()).toHaveLength(0);
  }

  it('restarts a lane whose drain job was deleted by hand, and everything arrives', async () => {
    h.writeConfig(`
routes:
  - name: lost
    target_url: ${receiver.url}/lost
    ordering: strict
    retry: { backoff_cap: 3s }
`);
    answer429Once();
    // Jobs wait only briefly for work, so none is around when the lane comes due.
    await h.start({ reconcileEveryMs: 500, lingerMs: 100 });
    const enqueued = [];
    for (let id = 1; id <= 5; id++) enqueued.push(await h.enqueue(messageUpdate(id, id)));
    const lane = enqueued[0].deliveries[0].lane;
    await receiver.waitFor(1);

    // An operator deletes the only job that would wake the backed-off lane.
    await removeWakeJob('lost');

    await eventually(() => receiver.deliveries.length === 6, {
      timeoutMs: 15_000,
      what: 'the lane restarted and drained',
    });
    expect(receiver.deliveries.map(updateIdOf)).toEqual([1, 1, 2, 3, 4, 5]);
    // The last 2xx reaches the receiver before the dispatcher releases the lane.
    await eventually(async () => (await h.fixture.lanes.generation(lane)) === undefined, {
      what: 'the drained lane released',
    });
    expect(h.logs.some((l) => l.msg === 'lanes reconciled' && Number(l.restarted) >= 1)).toBe(true);
  });

  it('keeps reconciling after a failover lost the next run of its schedule', async () => {
    h.writeConfig(`
routes:
  - name: lost-schedule
    target_url: ${receiver.url}/lost-schedule
    ordering: strict
    retry: { backoff_cap: 3s }
`);
    answer429Once();
    await h.start({ reconcileEveryMs: 500, lingerMs: 100 });
    for (let id = 1; id <= 3; id++) await h.enqueue(messageUpdate(id, id));
    await receiver.waitFor(1);

    // BullMQ adds a schedule's next run as it starts the current one; a failover that
    // loses that write leaves the schedule without any run to come. Here the pending
    // runs of the reconcile schedule go, and so does the job that would wake the lane.
    const maintenance = new Queue(QueueName.Maintenance, {
      connection: h.fixture.redis,
      prefix: h.fixture.ctx.keys.bullPrefix,
    });
    try {
      await eventually(async () => (await maintenance.getDelayed()).length > 0, {
        what: 'the next reconcile run scheduled',
      });
      // BullMQ refuses to remove a schedule's run: the writes are undone by hand, as the
      // promoted replica would never have had them.
      for (const job of await maintenance.getJobs(['delayed', 'wait'])) {
        if (job.name !== JobName.ReconcileLanes || !job.id) continue;
        await h.fixture.redis
          .multi()
          .zrem(maintenance.keys.delayed as string, job.id)
          .lrem(maintenance.keys.wait as string, 0, job.id)
          .del(maintenance.toKey(job.id))
          .exec();
      }
      expect(
        (await maintenance.getJobs(['delayed', 'wait'])).filter(
          (job) => job.name === JobName.ReconcileLanes,
        ),
      ).toHaveLength(0);
    } finally {
      await maintenance.close();
    }
    await removeWakeJob('lost-schedule');

    await eventually(() => receiver.deliveries.length === 4, {
      timeoutMs: 15_000,
      what: 'the schedule back, the lane restarted by a reconcile and drained',
    });
    expect(receiver.deliveries.map(updateIdOf)).toEqual([1, 1, 2, 3]);
  });

  it('after an upgrade, delivers the lanes and drain-lane jobs the previous engine left in Redis', async () => {
    h.writeConfig(`
routes:
  - name: old-engine
    target_url: ${receiver.url}/old-engine
`);
    // What the previous engine wrote: lanes with a generation and no owner, listed
    // nowhere, each with a drain-lane job of that generation (one job lost for good).
    const { redis, ctx, scheduler } = h.fixture;
    const lanes = [1, 2].map((chat) =>
      laneId('old-engine', 'bot-a', { kind: 'chat', chatId: chat }),
    );
    for (const [i, lane] of lanes.entries()) {
      for (let n = 0; n < 3; n++) {
        const updateId = 10 * (i + 1) + n;
        await redis.rpush(
          ctx.keys.lane(lane),
          encodeEntry({
            deliveryId: newDeliveryId(),
            updateId,
            bot: 'bot-a',
            route: 'old-engine',
            acceptedAt: Date.now(),
            body: Buffer.from(JSON.stringify(messageUpdate(updateId, i + 1))),
          }),
        );
      }
      await redis.hset(ctx.keys.laneState(lane), 'gen', 7 + i);
      await redis.sadd(ctx.keys.routeLanes('old-engine'), lane);
      await redis.hincrby(ctx.keys.routeStats('old-engine'), 'queued', 3);
    }
    await redis.sadd(ctx.keys.routes, 'old-engine');
    const queue = scheduler.queue('old-engine') as unknown as Queue<DrainLaneJob>;
    await queue.add(
      JobName.DrainLane,
      { lane: lanes[0], gen: 7 },
      { jobId: drainJobId(lanes[0], 7) },
    );

    await h.start({ reconcileEveryMs: 60_000 });
    await eventually(() => receiver.deliveries.length === 6, { what: 'every old delivery' });
    expect(receiver.deliveries.map(updateIdOf).filter((id) => id < 20)).toEqual([10, 11, 12]);
    expect(receiver.deliveries.map(updateIdOf).filter((id) => id >= 20)).toEqual([20, 21, 22]);
    await eventually(async () => (await readRouteStats(ctx, 'old-engine')).queued === 0, {
      what: 'an empty route',
    });
  });

  it('a route removed by a reload: its worker stops, its deliveries go dead as route_removed, other routes go on', async () => {
    const config = (withOld: boolean) =>
      h.writeConfig(`
routes:
${
  withOld
    ? `  - name: old
    target_url: ${receiver.url}/old
    retry: { backoff_cap: 1s }
`
    : ''
}  - name: keep
    target_url: ${receiver.url}/keep
`);
    config(true);
    receiver.respondWith((d) => (d.path === '/old' ? { status: 503 } : { status: 204 }));
    const app = await h.start({ reconcileEveryMs: 300, routeRemovedAfterMs: 1_000 });
    const old: string[] = [];
    for (let id = 1; id <= 6; id++) {
      const { deliveries } = await h.enqueue(messageUpdate(id, id % 2));
      old.push(deliveries.find((d) => d.route === 'old')!.deliveryId);
    }
    await receiver.waitFor((d) => d.path === '/old');

    config(false);
    // SIGHUP re-reads the file with the process environment, where the secrets live.
    for (const [name, value] of Object.entries(h.env)) process.env[name] = value;
    const outcome = await app.app.get(ConfigService).reload();
    expect(outcome).toMatchObject({ ok: true });
    await eventually(async () => (await h.fixture.dead.countByRoute('old')) === old.length, {
      timeoutMs: 15_000,
      what: 'the removed route killed',
    });
    for (const id of old) {
      expect(await h.fixture.dead.get(id)).toMatchObject({ reason: DeadReason.RouteRemoved });
    }
    expect(await readRouteStats(h.fixture.ctx, 'old')).toMatchObject({ queued: 0, lanes: 0 });
    // The closed worker sends nothing more for the removed route.
    const seen = receiver.deliveries.filter((d) => d.path === '/old').length;
    await sleep(1_500);
    expect(receiver.deliveries.filter((d) => d.path === '/old').length).toBe(seen);

    await h.enqueue(messageUpdate(100, 1));
    await receiver.waitFor((d) => d.path === '/keep' && updateIdOf(d) === 100);
  });
});
