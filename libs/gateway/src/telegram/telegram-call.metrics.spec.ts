import { RelaygramMetrics } from '@relaygram/observability';
import { telegramCallRecorder } from './telegram-call.metrics';

describe('telegramCallRecorder', () => {
  it('counts calls and errors by bot, method and code, never with made-up method names', async () => {
    const metrics = new RelaygramMetrics({ defaultMetrics: false });
    const record = telegramCallRecorder(metrics);
    record({ botId: 'main', method: 'sendMessage', ok: true, durationMs: 1 });
    record({ botId: 'main', method: 'sendMessage', ok: false, errorCode: 403, durationMs: 1 });
    record({ botId: 'main', method: 'madeUpName', ok: false, errorCode: 404, durationMs: 1 });
    record({ botId: 'main', method: 'sendMessage', ok: false, errorCode: 0, durationMs: 1 });
    const calls = await metrics.telegramCalls.get();
    const labels = calls.values.map((v) => ({ ...v.labels, value: v.value }));
    expect(labels).toEqual(
      expect.arrayContaining([
        { bot: 'main', method: 'sendMessage', code: '200', value: 1 },
        { bot: 'main', method: 'sendMessage', code: '403', value: 1 },
        { bot: 'main', method: 'unknown', code: '404', value: 1 },
        { bot: 'main', method: 'sendMessage', code: '0', value: 1 },
      ]),
    );
    const errors = await metrics.telegramErrors.get();
    expect(errors.values.reduce((n, v) => n + v.value, 0)).toBe(3);
  });

  it('caps the number of method labels', async () => {
    const metrics = new RelaygramMetrics({ defaultMetrics: false });
    const record = telegramCallRecorder(metrics);
    for (let i = 0; i < 300; i++) {
      record({ botId: 'b', method: `m${'x'.repeat(i)}`, ok: true, durationMs: 1 });
    }
    const calls = await metrics.telegramCalls.get();
    expect(new Set(calls.values.map((v) => v.labels.method)).size).toBeLessThanOrEqual(201);
  });
});
