import { RelaygramMetrics } from '@relaygram/observability';
import { countPace } from './pace-metrics';

const plan = { paced: true, cost: 1 };

describe('countPace', () => {
  it('observes a wait by its budget, counts a refusal, and leaves other outcomes alone', async () => {
    const metrics = new RelaygramMetrics({ defaultMetrics: false });
    countPace(metrics, 'shop', { kind: 'go', plan, waitedMs: 250, budget: 'chat' });
    countPace(metrics, 'shop', { kind: 'refused', plan, retryAfter: 3, budget: 'group' });
    countPace(metrics, 'shop', { kind: 'unpaced' });
    countPace(metrics, 'shop', { kind: 'aborted' });
    const text = await metrics.registry.metrics();
    expect(text).toContain('relaygram_outbound_wait_seconds_sum{bot="shop",budget="chat"} 0.25');
    expect(text).toContain('relaygram_outbound_wait_seconds_count{bot="shop",budget="chat"} 1');
    expect(text).toContain('relaygram_outbound_paced_total{bot="shop",budget="group"} 1');
    expect(text).not.toMatch(/relaygram_outbound_paced_total\{bot="shop",budget="chat"\}/);
  });

  it('keeps each bot and budget apart across calls, and each registry apart', async () => {
    const first = new RelaygramMetrics({ defaultMetrics: false });
    const second = new RelaygramMetrics({ defaultMetrics: false });
    countPace(first, 'shop', { kind: 'go', plan, waitedMs: 0, budget: 'none' });
    countPace(first, 'shop', { kind: 'go', plan, waitedMs: 1000, budget: 'none' });
    countPace(first, 'news', { kind: 'go', plan, waitedMs: 500, budget: 'none' });
    countPace(first, 'shop', { kind: 'go', plan, waitedMs: 2000, budget: 'bot' });
    countPace(second, 'shop', { kind: 'go', plan, waitedMs: 0, budget: 'none' });
    const text = await first.registry.metrics();
    expect(text).toContain('relaygram_outbound_wait_seconds_count{bot="shop",budget="none"} 2');
    expect(text).toContain('relaygram_outbound_wait_seconds_sum{bot="shop",budget="none"} 1');
    expect(text).toContain('relaygram_outbound_wait_seconds_sum{bot="news",budget="none"} 0.5');
    expect(text).toContain('relaygram_outbound_wait_seconds_sum{bot="shop",budget="bot"} 2');
    expect(await second.registry.metrics()).toContain(
      'relaygram_outbound_wait_seconds_count{bot="shop",budget="none"} 1',
    );
  });
});
