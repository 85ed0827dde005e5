import { DEDUP_BLOCK_BITS } from '@relaygram/contracts';
import { startRedisServer } from '@relaygram/queue';
import type { IngressOptionsInput } from '@relaygram/ingress';
import {
  TelegramEmulator,
  eventually,
  replicatedRedis,
  type BotIdentity,
  type ReplicatedRedis,
} from '@relaygram/testing';
import { TestInstall, webhookSecret, type IngressInstance } from './support/test-install';

const FAST_POLLING: IngressOptionsInput = {
  polling: { timeoutSeconds: 1, leaseTtlMs: 1500, networkBackoffMs: 50, networkBackoffMaxMs: 200 },
  usernameRetryMs: 100,
};

/**
 * `redis.wait_replicas`: an update is acknowledged to Telegram (a webhook answered, a
 * polled batch confirmed by the next getUpdates) only once a replica holds it.
 * A primary and a replica of their own, started here, so freezing the replica leaves the
 * shared test Redis alone.
 */
describe('ingress with redis.wait_replicas', () => {
  let redis: ReplicatedRedis;
  let emulator: TelegramEmulator;
  let install: TestInstall;
  let polled: BotIdentity;
  const secret = webhookSecret();

  beforeAll(async () => {
    redis = await replicatedRedis(() => startRedisServer());
    emulator = await TelegramEmulator.start();
    install = new TestInstall(
      {
        apiBase: emulator.apiRoot,
        bots: [
          {
            id: 'shop',
            mode: 'webhook',
            token: emulator.addBot({ username: 'shop_bot' }).token,
            username: 'shop_bot',
            webhook: { url: 'https://relay.example/webhooks/telegram/shop', secret },
          },
          { id: 'sol', mode: 'polling', token: (polled = emulator.addBot()).token },
        ],
        routes: [{ name: 'site' }],
        redis: { wait_replicas: 1, wait_timeout: '300ms' },
      },
      redis.primary.url,
    );
    await install.ready();
  });
  afterAll(async () => {
    await install?.cleanup();
    await redis?.stop();
    await emulator?.stop();
  });

  const postUpdate = (ingress: IngressInstance, updateId: number) =>
    ingress.post(
      '/webhooks/telegram/shop',
      JSON.stringify({ update_id: updateId, message: { text: 'hi', chat: { id: 1 } } }),
      { 'x-telegram-bot-api-secret-token': secret },
    );

  /** Whether the replica has the update's dedup bit: the enqueue script's first write. */
  const onReplicaSeen = async (updateId: number) =>
    (await redis.onReplica.getbit(
      install.keys.dedup('shop', Math.floor(updateId / DEDUP_BLOCK_BITS)),
      updateId % DEDUP_BLOCK_BITS,
    )) === 1;

  it('answers 202 only once the replica holds the update', async () => {
    const ingress = await install.start();
    const answers = await Promise.all([1, 2, 3, 4, 5].map((id) => postUpdate(ingress, id)));
    for (const [i, answer] of answers.entries()) {
      expect(answer.status).toBe(202);
      expect(answer.json).toEqual({ status: 'queued', deliveries: 1 });
      // Read right after the answer, without waiting: the 202 came after WAIT.
      expect(await onReplicaSeen(i + 1)).toBe(true);
    }
  });

  it('answers 503 while the replica cannot confirm, and `duplicate` to the resend once it can', async () => {
    const ingress = await install.start();
    redis.freezeReplica();
    let frozen;
    try {
      frozen = await postUpdate(ingress, 100);
    } finally {
      redis.thawReplica();
    }
    expect(frozen.status).toBe(503);
    expect(frozen.headers['retry-after']).toBeUndefined();
    const failing = await ingress.healthz();
    expect((failing.body as unknown as Record<string, unknown>).replicas).toEqual({
      wait_replicas: 1,
      confirming: false,
      failing_since: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      problem: '0 of 1 Redis replicas acknowledged within 300 ms',
    });
    expect(frozen.json).toEqual({
      error:
        'Redis replicas did not confirm the update in time: stored on the primary only (Telegram retries)',
    });
    // The primary kept it: Telegram's resend is a duplicate, acknowledged once replicated.
    const again = await eventually(
      async () => {
        const res = await postUpdate(ingress, 100);
        return res.status === 202 ? res : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 100, what: '202 once the replica confirms' },
    );
    expect(again.json).toEqual({ status: 'duplicate', deliveries: 0 });
    const confirming = await ingress.healthz();
    expect((confirming.body as unknown as Record<string, unknown>).replicas).toEqual({
      wait_replicas: 1,
      confirming: true,
    });
    expect(await onReplicaSeen(100)).toBe(true);
    // One delivery: the resend was not queued a second time.
    const deliveries = await install.deliveriesOf('site');
    expect(deliveries.filter((d) => d.updateId === 100)).toHaveLength(1);
  });

  it('confirms a polled batch to Telegram only once the replica holds it', async () => {
    await install.start({ ingress: FAST_POLLING });
    const first = emulator.message(polled.id, { chatId: 7, text: 'one' });
    await eventually(() => emulator.pendingUpdates(polled.id).length === 0, {
      what: 'the first update confirmed',
    });
    redis.freezeReplica();
    let secondId = 0;
    try {
      secondId = emulator.message(polled.id, { chatId: 7, text: 'two' }).update_id;
      // Stored on the primary, and still not confirmed: the poller asks again from the
      // same offset while the replica cannot acknowledge.
      await eventually(
        async () =>
          emulator
            .calls(polled.id, { method: 'getUpdates' })
            .filter((call) => call.params.offset === secondId).length >= 2,
        { timeoutMs: 10_000, what: 'getUpdates asked again from the same offset' },
      );
      expect(emulator.pendingUpdates(polled.id).map((u) => u.update_id)).toEqual([secondId]);
    } finally {
      redis.thawReplica();
    }
    await eventually(() => emulator.pendingUpdates(polled.id).length === 0, {
      timeoutMs: 10_000,
      what: 'the second update confirmed once the replica runs',
    });
    const deliveries = (await install.deliveriesOf('site')).filter((d) =>
      [first.update_id, secondId].includes(d.updateId),
    );
    expect(deliveries.map((d) => d.updateId)).toEqual([first.update_id, secondId]);
  });
});
