import { laneId } from '@relaygram/contracts';
import { PollingAdapter, type IngressOptionsInput } from '@relaygram/ingress';
import { TelegramEmulator, type BotIdentity, eventually } from '@relaygram/testing';
import { TestInstall, type IngressInstance } from './support/test-install';

const LEASE_TTL_MS = 1500;
const FAST: IngressOptionsInput = {
  polling: { timeoutSeconds: 1, leaseTtlMs: LEASE_TTL_MS, networkBackoffMs: 50 },
};

describe('two ingress instances with one polling bot', () => {
  let emulator: TelegramEmulator;
  let bot: BotIdentity;
  let install: TestInstall;

  beforeAll(async () => {
    emulator = await TelegramEmulator.start();
    bot = emulator.addBot();
    install = new TestInstall({
      apiBase: emulator.apiRoot,
      bots: [{ id: 'sol', mode: 'polling', token: bot.token }],
      routes: [{ name: 'site' }],
    });
    await install.ready();
  });
  afterAll(async () => {
    await install.cleanup();
    await emulator.stop();
  });

  const pollerOf = (instance: IngressInstance) => instance.get(PollingAdapter).poller('sol');

  it('polls from exactly one; when it stops, the other takes over within the lease TTL', async () => {
    const a = await install.start({ ingress: FAST });
    const b = await install.start({ ingress: FAST });
    const [holder, standby] = await eventually(
      () => {
        const pa = pollerOf(a);
        const pb = pollerOf(b);
        if (pa?.polling && pb?.state === 'standby') return [a, b] as const;
        if (pb?.polling && pa?.state === 'standby') return [b, a] as const;
        return undefined;
      },
      { what: 'one polling, one standing by' },
    );

    // For a few lease periods: one poller, no 409 between our own replicas.
    const first = emulator.message(bot.id, { chatId: 1, text: 'one' });
    await eventually(async () => (await install.deliveriesOf('site')).length === 1);
    await new Promise((resolve) => setTimeout(resolve, 2 * LEASE_TTL_MS));
    expect(pollerOf(holder)?.polling).toBe(true);
    expect(pollerOf(standby)).toMatchObject({ state: 'standby', polling: false });
    const calls = emulator.calls(bot.id, { method: 'getUpdates' });
    expect(calls.filter((c) => c.status === 409)).toEqual([]);
    // Both replicas report the same, whichever one polls.
    for (const instance of [a, b]) {
      expect((await instance.healthz()).body.bots).toEqual([
        expect.objectContaining({ id: 'sol', polling: true, healthy: true, state: 'polling' }),
      ]);
    }

    const stoppedAt = Date.now();
    await holder.close();
    await eventually(() => pollerOf(standby)?.polling === true, {
      timeoutMs: LEASE_TTL_MS,
      intervalMs: 10,
      what: 'the standby polling within the lease TTL',
    });
    expect(Date.now() - stoppedAt).toBeLessThanOrEqual(LEASE_TTL_MS);

    const second = emulator.message(bot.id, { chatId: 1, text: 'two' });
    const entries = await eventually(async () => {
      const found = await install.laneEntries(laneId('site', 'sol', { kind: 'chat', chatId: 1 }));
      return found.length === 2 ? found : undefined;
    });
    expect(entries.map((e) => e.updateId)).toEqual([first.update_id, second.update_id]);
    await standby.close();
    // The last one out leaves the lease free and says so.
    expect(await install.redis.exists(install.keys.pollerLease('sol'))).toBe(0);
    expect(await install.redis.hget(install.keys.botState('sol'), 'poller_state')).toBe('stopped');
  });

  it('takes over from a replica that died holding the lease once the lease expires', async () => {
    // A replica killed with kill -9 leaves its lease behind, unrenewed.
    await install.redis.set(install.keys.pollerLease('sol'), 'dead-replica', 'PX', LEASE_TTL_MS);
    const diedAt = Date.now();
    const survivor = await install.start({ ingress: FAST });
    expect(pollerOf(survivor)?.polling).toBe(false);
    await eventually(() => pollerOf(survivor)?.polling === true, {
      timeoutMs: 3 * LEASE_TTL_MS,
      intervalMs: 10,
      what: 'the survivor polling',
    });
    // Expiry, plus at most one standby period (a third of the TTL) to notice.
    expect(Date.now() - diedAt).toBeLessThanOrEqual(LEASE_TTL_MS + LEASE_TTL_MS / 3 + 500);
    expect(Date.now() - diedAt).toBeGreaterThanOrEqual(LEASE_TTL_MS - 50);
    await survivor.close();
  });
});
