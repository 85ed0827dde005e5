import { RelaygramMetrics, SCRAPE_REFRESH_TIMEOUT_MS } from './relaygram-metrics';

describe('RelaygramMetrics', () => {
  it('refreshes the gauges once per scrape, before they are read', async () => {
    const metrics = new RelaygramMetrics({ defaultMetrics: false });
    let runs = 0;
    metrics.addScrapeHook({}, () => {
      runs += 1;
      metrics.queueDepth.labels('site').set(7);
    });
    const text = await metrics.registry.metrics();
    expect(runs).toBe(1);
    expect(text).toContain('relaygram_queue_depth{route="site"} 7');
  });

  it('counts a failed or slow refresh and still answers the scrape', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate'] });
    try {
      const metrics = new RelaygramMetrics({ defaultMetrics: false });
      const owner = {};
      metrics.addScrapeHook(owner, () => new Promise(() => undefined));
      const scrape = metrics.registry.metrics();
      await jest.advanceTimersByTimeAsync(SCRAPE_REFRESH_TIMEOUT_MS + 10);
      await scrape;
      metrics.removeScrapeHook(owner);
      metrics.addScrapeHook(owner, () => {
        throw new Error('Redis away');
      });
      await metrics.registry.metrics();
      const failures = await metrics.scrapeRefreshFailures.get();
      expect(failures.values[0].value).toBe(2);
    } finally {
      jest.useRealTimers();
    }
  });

  it('counts Bot API calls by bot, method and code, and failures apart', async () => {
    const metrics = new RelaygramMetrics({ defaultMetrics: false, service: 'gateway' });
    metrics.recordTelegramCall({ botId: 'sol', method: 'sendMessage', ok: true, durationMs: 3 });
    metrics.recordTelegramCall({
      botId: 'sol',
      method: 'sendMessage',
      ok: false,
      errorCode: 403,
      durationMs: 3,
    });
    metrics.recordTelegramCall({ method: 'getMe', ok: false, errorCode: -1, durationMs: 3 });
    const text = await metrics.registry.metrics();
    expect(text).toContain(
      'relaygram_telegram_api_calls_total{bot="sol",method="sendMessage",code="200",service="gateway"} 1',
    );
    expect(text).toContain(
      'relaygram_telegram_api_errors_total{bot="sol",method="sendMessage",code="403",service="gateway"} 1',
    );
    expect(text).toContain(
      'relaygram_telegram_api_errors_total{bot="unknown",method="getMe",code="-1",service="gateway"} 1',
    );
  });

  it('labels a method Telegram does not know as unknown, never with its made-up name', async () => {
    const metrics = new RelaygramMetrics({ defaultMetrics: false });
    metrics.recordTelegramCall({ botId: 'main', method: 'sendMessage', ok: true, durationMs: 1 });
    metrics.recordTelegramCall({
      botId: 'main',
      method: 'madeUpName',
      ok: false,
      errorCode: 404,
      durationMs: 1,
    });
    const calls = await metrics.telegramCalls.get();
    expect(calls.values.map((v) => ({ ...v.labels, value: v.value }))).toEqual(
      expect.arrayContaining([
        { bot: 'main', method: 'sendMessage', code: '200', value: 1 },
        { bot: 'main', method: 'unknown', code: '404', value: 1 },
      ]),
    );
  });

  it('caps the number of method labels', async () => {
    const metrics = new RelaygramMetrics({ defaultMetrics: false });
    for (let i = 0; i < 300; i++) {
      metrics.recordTelegramCall({
        botId: 'b',
        method: `m${'x'.repeat(i)}`,
        ok: true,
        durationMs: 1,
      });
    }
    const calls = await metrics.telegramCalls.get();
    expect(new Set(calls.values.map((v) => v.labels.method)).size).toBeLessThanOrEqual(201);
  });
});
