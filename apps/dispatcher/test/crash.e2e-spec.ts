import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { readRouteStats } from '@relaygram/queue';
import {
  type RecordingReceiver,
  type Delivery,
  eventually,
  firstArrivals,
  updateIdOf,
} from '@relaygram/testing';
import { DispatcherHarness, harnessEachTest, messageUpdate } from './support/dispatcher-harness';

const REPO = join(__dirname, '..', '..', '..');
const MAIN = join(REPO, 'apps', 'dispatcher', 'src', 'main.ts');

const ok = (d: Delivery) => d.status >= 200 && d.status <= 299;

interface Child {
  process: ChildProcess;
  output: string[];
  exited: Promise<number | null>;
}

/** The dispatcher as it runs in production: its own process, started from source. */
function spawnDispatcher(h: DispatcherHarness): Child {
  const child = spawn(process.execPath, ['-r', require.resolve('@swc-node/register'), MAIN], {
    cwd: REPO,
    env: {
      PATH: process.env.PATH ?? '',
      SWC_NODE_PROJECT: join(REPO, 'tsconfig.base.json'),
      ...h.processEnv(),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  return { process: child, output, exited };
}

async function stopChild(child: Child | undefined): Promise<void> {
  if (!child || child.process.exitCode !== null || child.process.signalCode !== null) return;
  child.process.kill('SIGKILL');
  await child.exited;
}

describe('dispatcher: crashes and shutdown', () => {
  let h: DispatcherHarness;
  let receiver: RecordingReceiver;
  const children: Child[] = [];

  harnessEachTest(
    'crash',
    (harness, rx) => {
      h = harness;
      receiver = rx;
    },
    async () => {
      for (const child of children.splice(0)) await stopChild(child);
    },
  );

  it('kill -9 mid-delivery: after a restart every update arrives, first arrivals in order', async () => {
    h.writeConfig(`
routes:
  - name: crashy
    target_url: ${receiver.url}/crashy
    retry: { backoff_cap: 1s }
`);
    const chats = [1, 2, 3];
    const ids = new Map(chats.map((chat) => [chat, [] as number[]]));
    for (let n = 0; n < 10; n++) {
      for (const chat of chats) {
        const id = 100 + n * 10 + chat;
        ids.get(chat)!.push(id);
        await h.enqueue(messageUpdate(id, chat));
      }
    }
    // The 5th update of chat 2 hangs: the dispatcher dies while waiting for it.
    const hanging = ids.get(2)![4];
    let hung = false;
    receiver.respondWith((d) => {
      if (updateIdOf(d) === hanging && !hung) {
        hung = true;
        return { status: 204, delayMs: 60_000 };
      }
      return { status: 204 };
    });

    const first = spawnDispatcher(h);
    children.push(first);
    await receiver.waitFor((d) => updateIdOf(d) === hanging, { timeoutMs: 30_000 });
    first.process.kill('SIGKILL');
    expect(await first.exited).toBeNull();
    const before = receiver.deliveries.length;

    const second = spawnDispatcher(h);
    children.push(second);
    // The dead process's jobs come back once their locks (30 s) expire.
    await eventually(
      () => new Set(receiver.deliveries.filter(ok).map(updateIdOf)).size === 30 && !!hung,
      { timeoutMs: 75_000, intervalMs: 200, what: 'all 30 updates delivered' },
    );
    for (const chat of chats) {
      const mine = receiver.deliveries.filter((d) => ids.get(chat)!.includes(updateIdOf(d)));
      expect(firstArrivals(mine)).toEqual(ids.get(chat));
    }
    // The update cut off by the crash was sent again (at-least-once).
    const hangingAttempts = receiver.deliveries.filter((d) => updateIdOf(d) === hanging);
    expect(hangingAttempts.length).toBeGreaterThanOrEqual(2);
    expect(receiver.deliveries.length).toBeGreaterThan(before);
    await eventually(async () => (await readRouteStats(h.fixture.ctx, 'crashy')).queued === 0, {
      what: 'an empty route',
    });

    // SIGTERM: the process finishes and exits cleanly.
    second.process.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 120_000);

  it('SIGTERM-style close: the delivery in flight finishes, the lane is handed back, another dispatcher goes on', async () => {
    h.writeConfig(`
routes:
  - name: strict
    target_url: ${receiver.url}/strict
    ordering: strict
`);
    receiver.respondWith((d) =>
      updateIdOf(d) === 1 ? { status: 204, delayMs: 1_000 } : { status: 204 },
    );
    const a = await h.start({}, 'a');
    for (let id = 1; id <= 5; id++) await h.enqueue(messageUpdate(id, id));
    await receiver.waitFor(1);
    await h.stop(a);
    // Update 1 was answered before the close returned, and nothing after it was sent.
    expect(
      h.logs.some((l) => l.msg === 'delivered' && l.update_id === 1 && l.instance === 'a'),
    ).toBe(true);
    expect(receiver.deliveries.map(updateIdOf)).toEqual([1]);
    expect((await readRouteStats(h.fixture.ctx, 'strict')).queued).toBe(4);

    await h.start({}, 'b');
    await eventually(() => receiver.deliveries.length === 5, { what: 'updates 2..5' });
    expect(receiver.deliveries.map(updateIdOf)).toEqual([1, 2, 3, 4, 5]);
  });

  it('shutdown grace over: an attempt still in flight is cut and its lane handed back', async () => {
    h.writeConfig(`
routes:
  - name: strict
    target_url: ${receiver.url}/strict
    ordering: strict
`);
    let slow = true;
    receiver.respondWith((d) => {
      if (updateIdOf(d) === 1 && slow) {
        slow = false;
        return { status: 204, delayMs: 20_000 };
      }
      return { status: 204 };
    });
    const a = await h.start({ shutdownGraceMs: 300 }, 'a');
    for (let id = 1; id <= 3; id++) await h.enqueue(messageUpdate(id, id));
    await receiver.waitFor(1);
    const started = Date.now();
    await h.stop(a);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(h.logsMatching('delivery cut short by shutdown')).toHaveLength(1);

    await h.start({}, 'b');
    await eventually(() => receiver.deliveries.filter(ok).length >= 4, {
      what: 'the re-sent head and the rest',
    });
    const order = receiver.deliveries.map(updateIdOf);
    expect(order).toEqual([1, 1, 2, 3]);
    expect(receiver.deliveries[1].headers['x-webhook-attempt']).toBe('2');
  });
});
