import { createServer, type AddressInfo, type Socket } from 'node:net';
import { loadConfigOrThrow } from '@relaygram/config';
import { DeadReason } from '@relaygram/contracts';
import { laneResolverFor, readRouteStats, type DeadLetter } from '@relaygram/queue';
import {
  RecordingReceiver,
  type Delivery,
  type ResponseSpec,
  eventually,
  updateIdOf,
} from '@relaygram/testing';
import { DispatcherHarness, messageUpdate, sleep } from './support/dispatcher-harness';

/**
 * SPEC section 5, one attempt: each class of answer ends as the table says. Routes use
 * a 1 s backoff cap and timeout so retries come quickly.
 */
describe('dispatcher: outcome of an attempt', () => {
  let h: DispatcherHarness;
  let receiver: RecordingReceiver;
  const scripts = new Map<number, ResponseSpec[]>();
  let nextId = 1000;

  // A target that takes the TCP connection and never answers: over https, connecting
  // (the TLS handshake) never ends.
  const silentSockets = new Set<Socket>();
  const silent = createServer((socket) => {
    silentSockets.add(socket);
    socket.on('close', () => silentSockets.delete(socket));
  });

  beforeAll(async () => {
    h = await DispatcherHarness.create('outcomes');
    receiver = await RecordingReceiver.start();
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const silentPort = (silent.address() as AddressInfo).port;
    receiver.respondWith((d) => scripts.get(updateIdOf(d))?.shift() ?? { status: 204 });
    h.writeConfig(`
routes:
  - name: main
    target_url: ${receiver.url}/main
    timeout: 1s
    retry: { backoff_cap: 1s, max_consecutive_5xx: 3, max_age: 1h }
    match: { chat_ids: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30] }
  - name: patient
    target_url: ${receiver.url}/patient
    retry: { backoff_cap: 5s }
    match: { chat_ids: [100] }
  - name: aging
    target_url: ${receiver.url}/aging
    retry: { backoff_cap: 1s, max_age: 3s, max_consecutive_5xx: 2 }
    match: { chat_ids: [200] }
  - name: silent
    target_url: https://127.0.0.1:${silentPort}/never
    timeout: 1s
    retry: { backoff_cap: 1s }
    match: { chat_ids: [300] }
`);
    await h.start();
  });

  afterAll(async () => {
    await h.cleanup();
    await receiver.stop();
    for (const socket of silentSockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });

  /** Sends one update to `chat` with the target answering `answers` in order, then 204. */
  async function send(chat: number, answers: ResponseSpec[] = []) {
    const updateId = nextId++;
    scripts.set(updateId, [...answers]);
    const { deliveries } = await h.enqueue(messageUpdate(updateId, chat));
    return { updateId, deliveryId: deliveries[0].deliveryId };
  }

  const requestsFor = (updateId: number): Delivery[] =>
    receiver.deliveries.filter((d) => updateIdOf(d) === updateId);

  async function deliveredAfter(updateId: number, attempts: number): Promise<Delivery[]> {
    // The receiver records the status it will answer; the attempt number tells the
    // 2xx that counts from an earlier, slower answer.
    await receiver.waitFor(
      (d) =>
        updateIdOf(d) === updateId &&
        d.headers['x-webhook-attempt'] === String(attempts) &&
        d.status >= 200 &&
        d.status < 300,
      { timeoutMs: 15_000 },
    );
    const requests = requestsFor(updateId);
    expect(requests.map((d) => d.headers['x-webhook-attempt'])).toEqual(
      Array.from({ length: attempts }, (_, i) => String(i + 1)),
    );
    return requests;
  }

  async function deadLetter(deliveryId: string): Promise<DeadLetter> {
    let letter: DeadLetter | undefined;
    await eventually(async () => (letter = await h.fixture.dead.get(deliveryId)) !== undefined, {
      timeoutMs: 15_000,
      what: `dead letter ${deliveryId}`,
    });
    return letter!;
  }

  it('2xx: delivered at the first attempt, a body or none', async () => {
    const sent = await Promise.all([
      send(1, [{ status: 200, body: 'ok' }]),
      send(2, [{ status: 201, body: { id: 1 } }]),
      send(3, [{ status: 202 }]),
      send(4, [{ status: 204 }]),
    ]);
    for (const { updateId } of sent) await deliveredAfter(updateId, 1);
  });

  it('301: never followed; retried on the same URL until a 2xx', async () => {
    const moved = { status: 301, headers: { location: `${receiver.url}/moved` } };
    const { updateId } = await send(5, [moved, { ...moved, status: 308 }]);
    const requests = await deliveredAfter(updateId, 3);
    expect(requests.every((d) => d.path === '/main')).toBe(true);
    expect(receiver.deliveries.some((d) => d.path === '/moved')).toBe(false);
  });

  it('401, 403, 404, 408, 429: retried, then delivered', async () => {
    const statuses = [401, 403, 404, 408, 429];
    const sent = await Promise.all(
      statuses.map((status, i) => send(13 + i, [{ status }, { status }])),
    );
    for (const { updateId } of sent) await deliveredAfter(updateId, 3);
  });

  it('502, 503, 504: retried without counting toward poison', async () => {
    // More of them than the route's 5xx limit (3), and still not dead.
    const sent = await Promise.all(
      [502, 503, 504].map((status, i) => send(20 + i, Array(4).fill({ status }))),
    );
    for (const { updateId, deliveryId } of sent) {
      await deliveredAfter(updateId, 5);
      expect(await h.fixture.dead.get(deliveryId)).toBeUndefined();
    }
  });

  it.each([400, 409, 410, 422])(
    '%i: rejected, dead at once; the lane moves on, and a re-send delivers it',
    async (status) => {
      const chat = 8;
      const bad = await send(chat, [{ status, body: { error: `nope ${status}` } }]);
      const next = await send(chat);
      await deliveredAfter(next.updateId, 1);
      expect(requestsFor(bad.updateId)).toHaveLength(1);
      const letter = await deadLetter(bad.deliveryId);
      expect(letter).toMatchObject({
        reason: DeadReason.Rejected,
        attempts: 1,
        lastStatus: status,
        route: 'main',
        bot: 'bot-a',
        updateId: bad.updateId,
      });
      expect(JSON.parse(letter.lastBody!)).toEqual({ error: `nope ${status}` });

      const config = loadConfigOrThrow({ path: h.configPath, env: h.processEnv() });
      expect(await h.fixture.dead.replay(bad.deliveryId, laneResolverFor(config))).toBe('queued');
      const resent = await receiver.waitFor(
        (d) => updateIdOf(d) === bad.updateId && d.status === 204,
      );
      expect(resent.headers['x-relaygram-delivery-id']).toBe(bad.deliveryId);
      expect(resent.headers['x-webhook-attempt']).toBe('1');
    },
  );

  it('500, 501 and other 5xx: counted; at max_consecutive_5xx the delivery is poison', async () => {
    const long = 'x'.repeat(5000);
    const { updateId, deliveryId } = await send(9, [
      { status: 500, body: 'first' },
      { status: 503 },
      { status: 501, body: 'second' },
      { status: 599, body: long },
    ]);
    const letter = await deadLetter(deliveryId);
    expect(letter).toMatchObject({ reason: DeadReason.Poison, attempts: 4, lastStatus: 599 });
    expect(letter.lastBody).toBe('x'.repeat(1024));
    expect(requestsFor(updateId)).toHaveLength(4);
  });

  it('timeout: the attempt is cut at the route timeout and retried', async () => {
    const { updateId } = await send(10, [{ status: 204, delayMs: 3_000 }]);
    await deliveredAfter(updateId, 2);
  });

  it('timeout: a target that never finishes connecting is cut at the route timeout too', async () => {
    const { updateId } = await send(300);
    const cut = () =>
      h.logs.filter((l) => l.msg === 'delivery failed, will retry' && l.update_id === updateId);
    await eventually(() => cut().length >= 2, { timeoutMs: 10_000, what: 'two cut attempts' });
    for (const line of cut().slice(0, 2)) {
      expect(line.error).toBe('timeout');
      // undici's own connect timeout is 10 s; the route says 1 s (timers are coarse).
      expect(line.ms).toBeLessThan(3_000);
    }
  });

  it('dropped connection: retried', async () => {
    const { updateId } = await send(11, [{ drop: true }, { drop: true }]);
    await deliveredAfter(updateId, 3);
  });

  it('Retry-After: the next attempt waits as asked (within backoff_cap)', async () => {
    const { updateId } = await send(100, [{ status: 429, headers: { 'retry-after': '2' } }]);
    const [first, second] = await deliveredAfter(updateId, 2);
    // Without the header the first retry comes within 1 s (full jitter from 1 s).
    expect(second.receivedAt - first.receivedAt).toBeGreaterThanOrEqual(1_900);
  });

  it('max_age: a delivery older than max_age at the head is dead as expired, without an attempt', async () => {
    const updateId = nextId++;
    const { deliveries } = await h.enqueue(
      messageUpdate(updateId, 12),
      'bot-a',
      Date.now() - 2 * 3600_000,
    );
    const letter = await deadLetter(deliveries[0].deliveryId);
    expect(letter).toMatchObject({ reason: DeadReason.Expired, attempts: 0 });
    expect(requestsFor(updateId)).toHaveLength(0);
  });

  it('503s past max_age end as expired with the last answer kept, never as poison', async () => {
    const { updateId, deliveryId } = await send(
      200,
      Array(100).fill({ status: 503, body: 'down' }),
    );
    const letter = await deadLetter(deliveryId);
    expect(letter).toMatchObject({ reason: DeadReason.Expired, lastStatus: 503, lastBody: 'down' });
    // More 503s than max_consecutive_5xx (2) were answered before it expired.
    expect(requestsFor(updateId).length).toBeGreaterThan(2);
    expect(letter.attempts).toBe(requestsFor(updateId).length);
    const stats = await readRouteStats(h.fixture.ctx, 'aging');
    expect(stats).toMatchObject({ queued: 0, dead: 1 });
    await sleep(0);
  });
});
