import { HealthRegistry, mergeBotHealth } from './health-registry';

describe('HealthRegistry', () => {
  it('merges reports on one bot: unhealthy wins, polling if any polls, problems joined', () => {
    expect(
      mergeBotHealth(
        { id: 'a', mode: 'polling', polling: true, healthy: true, state: 'polling' },
        { id: 'a', mode: 'polling', polling: false, healthy: false, problem: 'getMe: 401' },
      ),
    ).toEqual({
      id: 'a',
      mode: 'polling',
      polling: true,
      healthy: false,
      state: 'polling',
      problem: 'getMe: 401',
    });
    const both = mergeBotHealth(
      {
        id: 'a',
        mode: 'webhook',
        polling: false,
        healthy: false,
        problem: 'x',
        webhook: { url: 'u' },
      },
      { id: 'a', mode: 'webhook', polling: false, healthy: false, problem: 'y' },
    );
    expect(both.problem).toBe('x; y');
    expect(both.webhook).toEqual({ url: 'u' });
  });

  it('leaves out a source that throws or does not answer in time', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate'] });
    try {
      const registry = new HealthRegistry();
      registry.addBotHealthSource('ok', () => [
        { id: 'a', mode: 'polling', polling: true, healthy: true },
      ]);
      registry.addBotHealthSource('broken', () => {
        throw new Error('boom');
      });
      registry.addBotHealthSource('stuck', () => new Promise(() => undefined));
      const pending = registry.bots();
      await jest.advanceTimersByTimeAsync(2500);
      expect(await pending).toEqual([{ id: 'a', mode: 'polling', polling: true, healthy: true }]);
    } finally {
      jest.useRealTimers();
    }
  });

  it('merges summary fields and forgets removed sources', async () => {
    const registry = new HealthRegistry();
    registry.addSummarySource('gateway', () => ({ clients: 2 }));
    registry.addSummarySource('broken', () => Promise.reject(new Error('no')));
    expect(await registry.summary()).toEqual({ clients: 2 });
    registry.addBotHealthSource('x', () => []);
    expect(registry.hasBotHealthSource('x')).toBe(true);
    registry.removeBotHealthSource('x');
    expect(registry.hasBotHealthSource('x')).toBe(false);
  });
});
