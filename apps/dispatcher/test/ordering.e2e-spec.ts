import { laneId } from '@relaygram/contracts';
import { newDeliveryId, readRouteStats, storedLane } from '@relaygram/queue';
import {
  type RecordingReceiver,
  type Delivery,
  eventually,
  firstArrivals,
  updateIdOf,
} from '@relaygram/testing';
import { DispatcherHarness, harnessEachTest, messageUpdate } from './support/dispatcher-harness';

const ok = (d: Delivery) => d.status >= 200 && d.status <= 299;

describe('dispatcher: ordering', () => {
  let h: DispatcherHarness;
  let receiver: RecordingReceiver;

  harnessEachTest('ordering', (harness, rx) => {
    h = harness;
    receiver = rx;
  });

  it('strict: a retried update holds its lane, in acceptance order; another route on the bot does not wait', async () => {
    h.writeConfig(`
routes:
  - name: site
    target_url: ${receiver.url}/site
    ordering: strict
    retry: { backoff_cap: 1s }
  - name: audit
    target_url: ${receiver.url}/audit
`);
    // Acceptance order, not update_id order (Telegram may restart ids at a random value).
    const ids = [901, 902, 903, 1, 2];
    let failures = 0;
    receiver.respondWith((d) =>
      d.path === '/site' && updateIdOf(d) === 902 && failures++ < 3
        ? { status: 503 }
        : { status: 204 },
    );
    await h.start();
    // Different chats: strict ordering puts all of them in one lane anyway.
    for (const [i, id] of ids.entries()) await h.enqueue(messageUpdate(id, 10 + i));

    await receiver.waitFor((d) => d.path === '/site' && updateIdOf(d) === 2, {
      timeoutMs: 15_000,
    });
    const site = receiver.deliveries.filter((d) => d.path === '/site');
    expect(site.map(updateIdOf)).toEqual([901, 902, 902, 902, 902, 903, 1, 2]);
    expect(site.map((d) => d.status)).toEqual([204, 503, 503, 503, 204, 204, 204, 204]);

    const audit = receiver.deliveries.filter((d) => d.path === '/audit');
    expect(audit.map(updateIdOf).sort()).toEqual([...ids].sort());
    // All five reached the other route while 902 was still being retried here.
    const recovered = site.find((d) => updateIdOf(d) === 902 && ok(d))!;
    expect(Math.max(...audit.map((d) => d.receivedAt))).toBeLessThan(recovered.receivedAt);
  });

  it('chat: 20 chats x 50 updates with random 5xx and two dispatchers: every update arrives, first arrivals in order per chat, chats in parallel', async () => {
    h.writeConfig(`
routes:
  - name: chats
    target_url: ${receiver.url}/chats
    retry: { backoff_cap: 1s, max_consecutive_5xx: 1000 }
`);
    const failing = [500, 502, 503];
    receiver.respondWith(() =>
      Math.random() < 0.15
        ? { status: failing[Math.floor(Math.random() * failing.length)] }
        : { status: 204 },
    );
    await h.start({}, 'one');
    await h.start({}, 'two');
    const byChat = new Map<number, number[]>();
    for (let n = 0; n < 50; n++) {
      for (let chat = 1; chat <= 20; chat++) {
        const id = 10_000 + n * 20 + chat;
        byChat.set(chat, [...(byChat.get(chat) ?? []), id]);
        await h.enqueue(messageUpdate(id, chat));
      }
    }
    const delivered = () => new Set(receiver.deliveries.filter(ok).map(updateIdOf)).size;
    await eventually(() => delivered() === 1000, { timeoutMs: 60_000, what: '1000 deliveries' });

    const firstDone = new Map<number, number>();
    for (const [chat, ids] of byChat) {
      const mine = receiver.deliveries.filter((d) => ids.includes(updateIdOf(d)));
      expect(firstArrivals(mine)).toEqual(ids);
      const last = mine.find((d) => updateIdOf(d) === ids[ids.length - 1] && ok(d))!;
      firstDone.set(chat, last.receivedAt);
    }
    // In parallel: when the first chat had all its updates, every chat had begun.
    const earliestFinish = Math.min(...firstDone.values());
    const started = new Set(
      receiver.deliveries
        .filter((d) => d.receivedAt < earliestFinish)
        .map((d) => (updateIdOf(d) - 10_001) % 20),
    );
    expect(started.size).toBe(20);
    // Both dispatchers took part.
    const instances = new Set(h.logsMatching('delivered').map((line) => line.instance));
    expect(instances).toEqual(new Set(['one', 'two']));
  });

  it('none: a retry does not hold back the updates after it, even in one spread lane', async () => {
    h.writeConfig(`
routes:
  - name: loose
    target_url: ${receiver.url}/loose
    ordering: none
    retry: { backoff_cap: 1s }
`);
    let failed = false;
    receiver.respondWith((d) => {
      if (updateIdOf(d) === 1 && !failed) {
        failed = true;
        return { status: 503 };
      }
      return { status: 204 };
    });
    // Delivery ids that the store keeps in one spread lane: the failing first one must
    // move aside rather than hold the other four.
    const single = (id: string) => laneId('loose', 'bot-a', { kind: 'single', deliveryId: id });
    const ids = [newDeliveryId()];
    while (ids.length < 5) {
      const id = newDeliveryId();
      if (storedLane(single(id)) === storedLane(single(ids[0]))) ids.push(id);
    }
    for (const [i, deliveryId] of ids.entries()) {
      const update = messageUpdate(i + 1, 1);
      await h.fixture.enqueuer.enqueue({
        bot: 'bot-a',
        updateId: update.update_id,
        body: Buffer.from(JSON.stringify(update)),
        deliveries: [{ route: 'loose', lane: single(deliveryId), deliveryId }],
      });
    }
    await h.start();
    await receiver.waitFor((d) => updateIdOf(d) === 1 && ok(d), { timeoutMs: 10_000 });
    expect(receiver.deliveries.map(updateIdOf)).toEqual([1, 2, 3, 4, 5, 1]);
    const retried = receiver.deliveries[5];
    expect(retried.headers['x-webhook-attempt']).toBe('2');
    expect(retried.headers['x-relaygram-delivery-id']).toBe(ids[0]);
  });

  it('a slow route (2 s answers) does not slow a fast route on the same dispatcher', async () => {
    h.writeConfig(`
routes:
  - name: slow
    target_url: ${receiver.url}/slow
    ordering: none
    concurrency: 2
  - name: fast
    target_url: ${receiver.url}/fast
`);
    receiver.respondWith((d) =>
      d.path === '/slow' ? { status: 204, delayMs: 2_000 } : { status: 204 },
    );
    await h.start();
    for (let id = 1; id <= 40; id++) await h.enqueue(messageUpdate(id, id));
    await eventually(() => receiver.deliveries.filter((d) => d.path === '/fast').length === 40, {
      timeoutMs: 10_000,
      what: 'the fast route delivering all 40',
    });
    // By then the slow route, with its two slots, had answered a handful at most.
    const slow = await readRouteStats(h.fixture.ctx, 'slow');
    expect(slow.delivered).toBeLessThanOrEqual(4);
    expect(slow.queued).toBeGreaterThanOrEqual(36);
  });

  it('a busy lane hands its worker slot on after a batch, so other lanes are not starved', async () => {
    h.writeConfig(`
routes:
  - name: narrow
    target_url: ${receiver.url}/narrow
    concurrency: 1
`);
    for (let id = 1; id <= 250; id++) await h.enqueue(messageUpdate(id, 1));
    await h.enqueue(messageUpdate(1000, 2));
    await h.start({ batchSize: 100, batchTimeMs: 60_000 });
    await eventually(() => receiver.deliveries.length === 251, { what: 'all 251 delivered' });
    const order = receiver.deliveries.map(updateIdOf);
    // One slot: chat 2 gets it when chat 1's job yields, after 100 deliveries.
    expect(order.indexOf(1000)).toBe(100);
    expect(order.filter((id) => id !== 1000)).toEqual(Array.from({ length: 250 }, (_, i) => i + 1));
  });
});
