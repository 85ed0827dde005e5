import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RelaygramMetrics } from './relaygram-metrics';

const DASHBOARD = join(__dirname, '..', '..', '..', '..', 'deploy', 'grafana', 'relaygram.json');

/** Every string in a JSON value, for the PromQL in panels and template variables. */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (value && typeof value === 'object') return Object.values(value).flatMap(strings);
  return [];
}

describe('the Grafana dashboard', () => {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Record<string, unknown>;
  const metrics = new RelaygramMetrics({ service: 'test' });
  const known = new Set(metrics.registry.getMetricsAsArray().map((m) => m.name));
  const histograms = new Set(
    metrics.registry
      .getMetricsAsArray()
      .filter((m) => (m as unknown as { type?: string }).type === 'histogram')
      .map((m) => m.name),
  );

  it('queries only metrics Relaygram exports', () => {
    const used = new Set(strings(dashboard).flatMap((s) => s.match(/relaygram_[a-z0-9_]+/g) ?? []));
    expect(used.size).toBeGreaterThan(10);
    const unknown = [...used].filter((name) => {
      if (known.has(name)) return false;
      const base = name.replace(/_(bucket|count|sum)$/, '');
      return !(base !== name && histograms.has(base));
    });
    expect(unknown).toEqual([]);
  });

  it('shows every Relaygram metric of its own', () => {
    const text = strings(dashboard).join('\n');
    const own = [...known].filter(
      (name) => !name.startsWith('relaygram_process_') && !name.startsWith('relaygram_nodejs_'),
    );
    expect(own.filter((name) => !text.includes(name))).toEqual([]);
  });
});
