import { type RecordingReceiver, eventually } from '@relaygram/testing';
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

async function liveness(app: RunningApp): Promise<Liveness> {
  const res = await fetch(`${app.url}/health/live`);
  return { status: res.status, body: (await res.json()) as Liveness['body'] };
}

async function stalledGauge(app: RunningApp, route: string): Promise<string | undefined> {
  const text = await (await fetch(`${app.adminUrl}/metrics`)).text();
  const line = text
    .split('\n')
    .find(
      (l) =>
        l.startsWith('relaygram_dispatcher_stalled_workers{') && l.includes(`route="${route}"`),
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

  it('fails liveness, logs and counts it, while its jobs wait with a slot free', async () => {
    h.writeConfig(`
routes:
  - name: stuck
    target_url: ${receiver.url}/stuck
    ordering: none
`);
    // The worker stops fetching after its second job, and still says it runs, as one
    // parked on a connection that never comes back does.
    const app = await h.start({
      stallWorkerAfter: 2,
      stallAfterMs: 1500,
      stallCheckEveryMs: 200,
      lingerMs: 100,
    });
    await h.enqueue(messageUpdate(1, 1));
    await receiver.waitFor(1);
    await h.enqueue(messageUpdate(2, 2));
    await receiver.waitFor(2);
    // The second job lingers for lanes handed to it, then ends; only new jobs are left.
    await sleep(500);
    expect((await liveness(app)).status).toBe(200);

    for (let id = 3; id <= 5; id++) await h.enqueue(messageUpdate(id, id));
    const failed = await eventually(
      async () => {
        const live = await liveness(app);
        return live.status === 503 ? live : undefined;
      },
      { timeoutMs: 10_000, what: 'liveness failing for the stuck worker' },
    );
    expect(failed.body.error?.dispatcher?.message).toBe(
      'route workers take no jobs while jobs wait: stuck',
    );
    expect(failed.body.error?.dispatcher?.stalled).toEqual([
      { route: 'stuck', job: expect.any(String), since: expect.any(String) },
    ]);
    expect(receiver.deliveries).toHaveLength(2);
    expect(await stalledGauge(app, 'stuck')).toBe('1');
    expect(
      h.logs.filter((l) => l.msg.startsWith('route worker takes no jobs') && l.route === 'stuck'),
    ).toHaveLength(1);

    // Nothing was lost: a dispatcher started in its place delivers what waited.
    await h.stop(app);
    await h.start({}, 'b');
    await receiver.waitFor(5, { timeoutMs: 15_000 });
  });
});
