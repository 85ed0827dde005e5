import type { Scenario } from './scenario';

/**
 * The `main` receiver answers 503 to 30 % of requests (retried, the lane waits), and
 * 422 to updates carrying `#reject` (rejected: dead at once). The audit expects exactly
 * those dead letters.
 */
export const flakyReceiver: Scenario = {
  name: 'flaky-receiver',
  summary: 'the main receiver answers 503 for 30 % of requests; 422 for #reject',
  traffic: { rejectShare: 0.02 },
  async body({ cluster, quick }, traffic) {
    let answered503 = 0;
    cluster.receiver('main').behaviour = (_arrival, update) => {
      if (textOf(update).startsWith('#reject'))
        return { status: 422, body: { error: 'rejected by the chaos run' } };
      if (Math.random() < 0.3) {
        answered503++;
        return { status: 503 };
      }
      return { status: 204 };
    };
    await traffic.load(quick ? 1_500 : 5_000, quick ? 120 : 150);
    return {
      drainDeadlineMs: quick ? 90_000 : 180_000,
      expectDead: (route, _bot, update) =>
        route === 'main' && textOf(update).startsWith('#reject') ? 'rejected' : undefined,
      notes: [() => `${answered503} answers were 503`],
    };
  },
};

function textOf(update: unknown): string {
  const message = (update as { message?: { text?: unknown } } | undefined)?.message;
  return typeof message?.text === 'string' ? message.text : '';
}
