import { parseFaultInjection } from './fault-injection';

describe('RELAYGRAM_FAULTS', () => {
  it('reads rates and counts, and nothing when unset', () => {
    const problems: string[] = [];
    expect(parseFaultInjection(undefined, problems)).toEqual({});
    expect(
      parseFaultInjection(
        'die_after_claim=0.01, die_after_yield=1,die_after_enqueue=0,max_stalled_count=0,drain_lock_ms=5000,stall_worker_after=3,stall_after_ms=4000',
        problems,
      ),
    ).toEqual({
      dieAfterClaim: 0.01,
      dieAfterYield: 1,
      dieAfterEnqueue: 0,
      maxStalledCount: 0,
      drainLockMs: 5000,
      stallWorkerAfter: 3,
      stallAfterMs: 4000,
    });
    expect(problems).toEqual([]);
  });

  it('names every bad pair, without echoing long values', () => {
    const problems: string[] = [];
    parseFaultInjection(
      `die_after_claim=2,max_stalled_count=-1,drain_lock_ms=1.5,${'x'.repeat(100)}=1,oops`,
      problems,
    );
    expect(problems).toEqual([
      'RELAYGRAM_FAULTS: die_after_claim must be a probability from 0 to 1',
      'RELAYGRAM_FAULTS: max_stalled_count must be a non-negative integer',
      'RELAYGRAM_FAULTS: drain_lock_ms must be a non-negative integer',
      expect.stringMatching(/^RELAYGRAM_FAULTS: unknown fault "x{40}" \(known: /),
      expect.stringMatching(/^RELAYGRAM_FAULTS: unknown fault "oops"/),
    ]);
  });
});
