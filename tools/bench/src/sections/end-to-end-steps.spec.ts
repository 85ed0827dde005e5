import { mergeRounds, type Round } from './end-to-end-steps';

const INGRESS = 11;
const DISPATCHER = 12;
const REDIS = 13;

function round(over: {
  ok: number;
  receipts: number[];
  answers?: number[];
  cpu: [number | undefined, number, number];
  peaks?: [number, number];
  failures?: Record<string, number>;
  skipped?: number;
  drained?: boolean;
  received?: number;
  scripts?: number;
}): Round {
  const failed = Object.values(over.failures ?? {}).reduce((n, k) => n + k, 0);
  return {
    seconds: 30,
    result: {
      sent: over.ok + failed,
      ok: over.ok,
      failed,
      skipped: over.skipped ?? 0,
      failures: over.failures ?? {},
      durationMs: 30_000,
      latencies: Float64Array.from(over.answers ?? [1]),
      idsUsed: over.ok + failed + (over.skipped ?? 0),
    },
    drained: over.drained ?? true,
    received: over.received ?? over.ok,
    receipts: Float64Array.from(over.receipts),
    delta: { commands: 40 * over.ok, scripts: over.scripts ?? 2 * over.ok, top: [] },
    used: new Map([
      [INGRESS, over.cpu[0]],
      [DISPATCHER, over.cpu[1]],
      [REDIS, over.cpu[2]],
    ]),
    peaks: new Map([
      [INGRESS, over.peaks?.[0] ?? 100],
      [DISPATCHER, over.peaks?.[1] ?? 100],
    ]),
    heap: { ingress: {}, dispatcher: {} },
  };
}

const pids = { ingress: INGRESS, dispatcher: DISPATCHER };

describe('mergeRounds', () => {
  it('takes the percentiles over the latencies of every round, not an average of each', () => {
    // 99 fast receipts in one round, one slow in the other: p99 is the fast one, max the slow.
    const fast = round({ ok: 99, receipts: Array.from({ length: 99 }, () => 2), cpu: [1, 1, 1] });
    const slow = round({ ok: 1, receipts: [500], cpu: [1, 1, 1] });
    const merged = mergeRounds(pids, 2000, [fast, slow]);
    expect(merged.postToReceipt).toMatchObject({ count: 100, p50: 2, p99: 2, max: 500 });
    expect(merged.seconds).toBe(60);
    expect(merged.result.ok).toBe(100);
  });

  it('adds CPU and Redis work and keeps the highest RSS peak', () => {
    const merged = mergeRounds(pids, 2000, [
      round({ ok: 100, receipts: [1], cpu: [1000, 2000, 500], peaks: [150, 200], scripts: 200 }),
      round({ ok: 300, receipts: [1], cpu: [3000, 4000, 700], peaks: [170, 180], scripts: 700 }),
    ]);
    expect(merged.used.get(INGRESS)).toBe(4000);
    expect(merged.used.get(REDIS)).toBe(1200);
    expect(merged.peaks.get(INGRESS)).toBe(170);
    expect(merged.peaks.get(DISPATCHER)).toBe(200);
    expect(merged.work.scripts).toBeCloseTo(900 / 400);
    expect(merged.work.commands).toBeCloseTo(40);
  });

  it('leaves CPU unknown when a round could not read it', () => {
    const merged = mergeRounds(pids, 2000, [
      round({ ok: 10, receipts: [1], cpu: [1000, 1, 1] }),
      round({ ok: 10, receipts: [1], cpu: [undefined, 1, 1] }),
    ]);
    expect(merged.used.get(INGRESS)).toBeUndefined();
    expect(merged.used.get(DISPATCHER)).toBe(2);
  });

  it('sums the failures and says what went wrong in any round', () => {
    const merged = mergeRounds(pids, 2000, [
      round({ ok: 10, receipts: [1], cpu: [1, 1, 1], failures: { '503': 2 }, skipped: 4 }),
      round({ ok: 10, receipts: [1], cpu: [1, 1, 1], failures: { '503': 1, ECONNRESET: 1 } }),
      round({ ok: 10, receipts: [1], cpu: [1, 1, 1], drained: false, received: 7 }),
    ]);
    expect(merged.result.failures).toEqual({ '503': 3, ECONNRESET: 1 });
    expect(merged.drained).toBe(false);
    expect(merged.problems).toBe(
      '4 POSTs failed (3 x 503, 1 x ECONNRESET); 4 POSTs not sent when due (100 in flight); ' +
        'the queue did not drain within 30 s after the load; 3 accepted updates not received',
    );
  });

  it('is clean when nothing went wrong', () => {
    const merged = mergeRounds(pids, 2000, [round({ ok: 10, receipts: [1], cpu: [1, 1, 1] })]);
    expect(merged.problems).toBeUndefined();
  });
});
