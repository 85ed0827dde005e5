import { ROUTES } from '../harness/chaos-cluster';
import type { Arrival } from '../harness/audited-receiver';
import type { Scenario } from './scenario';

/**
 * The `side` receiver (a `chat` route) answers after 2 s; the others answer at once.
 * Each route has its own worker slots, so the fast routes keep their pace: the note
 * compares how long after injection each route got its deliveries.
 */
export const slowRoute: Scenario = {
  name: 'slow-route',
  summary: 'the side receiver (chat route) answers in 2 s; the other routes keep their pace',
  async body({ cluster, quick }, traffic) {
    cluster.receiver('side').behaviour = () => ({ status: 204, delayMs: 2_000 });
    await traffic.load(quick ? 400 : 1_500, quick ? 40 : 50);
    const injectedAt = new Map(
      traffic.injected.map((i) => [`${i.bot}|${i.update.update_id}`, i.at]),
    );
    return {
      drainDeadlineMs: quick ? 90_000 : 180_000,
      notes: [
        () => {
          const lines: string[] = [];
          for (const route of ROUTES) {
            const latencies = firstArrivalLatencies(cluster.receiver(route).arrivals, injectedAt);
            if (latencies.length === 0) continue;
            lines.push(`${route} p50 ${pct(latencies, 0.5)} ms, p99 ${pct(latencies, 0.99)} ms`);
          }
          return `injection to first arrival: ${lines.join('; ')}`;
        },
      ],
    };
  },
};

function firstArrivalLatencies(
  arrivals: readonly Arrival[],
  injectedAt: Map<string, number>,
): number[] {
  const first = new Map<string, number>();
  for (const a of arrivals) {
    const key = `${a.bot}|${a.updateId}`;
    if (!first.has(key)) first.set(key, a.at);
  }
  const out: number[] = [];
  for (const [key, at] of first) {
    const sent = injectedAt.get(key);
    if (sent !== undefined) out.push(at - sent);
  }
  return out.sort((a, b) => a - b);
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? 0;
}
