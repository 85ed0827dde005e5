import { closedPort } from '@relaygram/testing';
import { get, type JsonAnswer } from './http-client';
import { startGatewayHarness, type GatewayHarness } from './gateway-harness';

interface Healthz {
  status: string;
  service: string;
  clients?: number;
  bots: {
    id: string;
    healthy: boolean;
    telegram_reachable?: boolean;
    clients?: number;
    problem?: string;
  }[];
}

/** /healthz answers 503 until the app's Redis connection is up: wait for that first. */
async function healthzOnceUp(url: string): Promise<JsonAnswer<Healthz>> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const res = await get<Healthz>(`${url}/healthz`);
    if (res.status !== 503 || Date.now() > deadline) return res;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('/healthz for the gateway', () => {
  let h: GatewayHarness;
  const healthz = () => healthzOnceUp(h.url);
  const getMeCalls = () =>
    [h.main, h.other, h.lonely].reduce(
      (n, bot) => n + h.emulator.calls(bot.id, { method: 'getMe' }).length,
      0,
    );

  beforeAll(async () => {
    h = await startGatewayHarness({ gateway: { healthTtlMs: 60_000, healthFailureTtlMs: 200 } });
  });
  afterAll(() => h.close());

  it('reports Telegram reachable per bot and the clients count', async () => {
    const res = await healthz();
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok', service: 'gateway', clients: 2 });
    const bots = Object.fromEntries(res.body.bots.map((b) => [b.id, b]));
    expect(bots['main-bot']).toMatchObject({ healthy: true, telegram_reachable: true, clients: 2 });
    expect(bots['other-bot']).toMatchObject({
      healthy: true,
      telegram_reachable: true,
      clients: 1,
    });
    expect(bots['lonely-bot']).toMatchObject({
      healthy: true,
      telegram_reachable: true,
      clients: 0,
    });
  });

  it('answers from its cache: probes do not become getMe calls', async () => {
    await healthz();
    const before = getMeCalls();
    for (let i = 0; i < 5; i++) expect((await healthz()).status).toBe(200);
    expect(getMeCalls()).toBe(before);
  });

  it('shows a bot whose token Telegram refuses as unhealthy, and checks failures again soon', async () => {
    const fresh = await startGatewayHarness({ gateway: { healthFailureTtlMs: 200 } });
    try {
      fresh.emulator.failUnauthorized(fresh.lonely.id, 'always');
      const first = await healthzOnceUp(fresh.url);
      expect(first.body.status).toBe('degraded');
      const lonely = first.body.bots.find((b) => b.id === 'lonely-bot');
      expect(lonely).toMatchObject({
        healthy: false,
        telegram_reachable: false,
        problem: expect.stringContaining('401'),
      });
      fresh.emulator.clearFailures(fresh.lonely.id);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const second = await healthzOnceUp(fresh.url);
      expect(second.body.bots.find((b) => b.id === 'lonely-bot')).toMatchObject({ healthy: true });
    } finally {
      await fresh.close();
    }
  });
});

describe('/healthz with Telegram unreachable', () => {
  let h: GatewayHarness;
  beforeAll(async () => {
    const port = await closedPort();
    h = await startGatewayHarness({ apiBase: () => `http://127.0.0.1:${port}` });
  });
  afterAll(() => h.close());

  it('stays 200 and marks every bot unreachable with the reason', async () => {
    const res = await healthzOnceUp(h.url);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('degraded');
    for (const bot of res.body.bots) {
      expect(bot).toMatchObject({
        healthy: false,
        telegram_reachable: false,
        problem: expect.stringMatching(/getMe failed: EFATAL: ECONNREFUSED/),
      });
    }
  });
});
