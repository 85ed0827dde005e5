import { type RecordingReceiver, eventually } from '@relaygram/testing';
import type { DispatcherModuleOptions } from '@relaygram/dispatcher';
import type { RunningApp } from '@relaygram/platform';
import {
  DispatcherHarness,
  harnessEachTest,
  messageUpdate,
  sleep,
} from './support/dispatcher-harness';

interface Liveness {
  status: number;
  body: { status?: string; error?: Record<string, { message?: string; stalled?: unknown[] }> };
}

/** Liveness once it fails for the worker of `queue` (others may fail with it). */
async function failingLiveness(app: RunningApp, queue: string): Promise<Liveness> {
  return eventually(
    async () => {
      const live = await liveness(app);
      const stalled = live.body.error?.dispatcher?.stalled as { queue: string }[] | undefined;
      return stalled?.some((s) => s.queue === queue) ? live : undefined;
    },
    { timeoutMs: 10_000, what: `liveness failing for the worker of ${queue}` },
  );
}

async function liveness(app: RunningApp): Promise<Liveness> {
  const res = await fetch(`${app.url}/health/live`);
  return { status: res.status, body: (await res.json()) as Liveness['body'] };
}

async function stalledGauge(app: RunningApp, queue: string): Promise<string | undefined> {
  const text = await (await fetch(`${app.adminUrl}/metrics`)).text();
  const line = text
    .split('\n')
    .find(
      (l) =>
        l.startsWith('relaygram_dispatcher_stalled_workers{') && l.includes(`queue="${queue}"`),
    );
  return line?.split(' ').pop();
}

describe('dispatcher: a route worker that takes no jobs', () => {
  let h: DispatcherHarness;
  let receiver: RecordingReceiver;

  harnessEachTest(
    'stall',
    (harness, rx) => {
      h = harness;
      receiver = rx;
    },
    (harness) => {
      for (const name of Object.keys(harness.env)) delete process.env[name];
    },
  );

  /** A dispatcher whose workers stop taking jobs after `jobs` each, watched closely. */
  function startStalling(jobs: number, options: DispatcherModuleOptions = {}) {
    return h.start({
      stallWorkerAfter: jobs,
      stallAfterMs: 1500,
      stallCheckEveryMs: 200,
      ...options,
    });
  }

  it('fails liveness, logs and counts it, while its jobs wait with a slot free', async () => {
    h.writeConfig(`
routes:
  - name: stuck
    target_url: ${receiver.url}/stuck
    ordering: none
`);
    // The worker stops fetching after its second job, and still says it runs, as one
    // parked on a connection that never comes back does.
    const app = await startStalling(2, { lingerMs: 100 });
    await h.enqueue(messageUpdate(1, 1));
    await receiver.waitFor(1);
    await h.enqueue(messageUpdate(2, 2));
    await receiver.waitFor(2);
    // The second job lingers for lanes handed to it, then ends; only new jobs are left.
    await sleep(500);
    expect((await liveness(app)).status).toBe(200);

    for (let id = 3; id <= 5; id++) await h.enqueue(messageUpdate(id, id));
    const failed = await failingLiveness(app, 'delivery.stuck');
    expect(failed.body.error?.dispatcher?.message).toBe(
      'workers take no jobs while jobs wait: route stuck',
    );
    expect(failed.body.error?.dispatcher?.stalled).toEqual([
      {
        worker: 'route stuck',
        queue: 'delivery.stuck',
        job: expect.any(String),
        since: expect.any(String),
      },
    ]);
    expect(receiver.deliveries).toHaveLength(2);
    expect(await stalledGauge(app, 'delivery.stuck')).toBe('1');
    expect(
      h.logs.filter(
        (l) => l.msg.startsWith('worker takes no jobs') && l.queue === 'delivery.stuck',
      ),
    ).toHaveLength(1);

    // Nothing was lost: a dispatcher started in its place delivers what waited.
    await h.stop(app);
    await h.start({}, 'b');
    await receiver.waitFor(5, { timeoutMs: 15_000 });
  });

  it('fails liveness when the maintenance worker lets a due reconcile wait', async () => {
    h.writeConfig(`
routes:
  - name: idle
    target_url: ${receiver.url}/idle
`);
    // The reconcile schedule's next run is a delayed job: with its only worker stuck,
    // nobody moves it to the wait list.
    const app = await startStalling(2, { reconcileEveryMs: 300 });
    const failed = await failingLiveness(app, 'maintenance');
    expect(failed.body.error?.dispatcher?.message).toBe(
      'workers take no jobs while jobs wait: maintenance',
    );
    expect(await stalledGauge(app, 'maintenance')).toBe('1');
  });

  it('fails liveness when a backed-off lane comes due and no worker wakes it', async () => {
    h.writeConfig(`
routes:
  - name: backoff
    target_url: ${receiver.url}/backoff
    ordering: strict
`);
    let first = true;
    receiver.respondWith(() => {
      if (!first) return { status: 204 };
      first = false;
      return { status: 429, headers: { 'retry-after': '1' } };
    });
    // The one job started tries the head, is told to come back in 1 s and ends; the
    // lane's wake is a delayed job that only a worker moves to the wait list.
    const app = await startStalling(1, { lingerMs: 100 });
    await h.enqueue(messageUpdate(1, 1));
    await receiver.waitFor(1);
    const failed = await failingLiveness(app, 'delivery.backoff');
    expect(failed.body.error?.dispatcher?.stalled).toContainEqual(
      expect.objectContaining({ worker: 'route backoff', queue: 'delivery.backoff' }),
    );
    expect(receiver.deliveries).toHaveLength(1);
  });
});
