import { WorkerStallWatch, type WorkerSample } from './worker-stall';

const look = (at: number, over: Partial<WorkerSample> = {}): WorkerSample => ({
  oldestWaiting: 'job-1',
  started: 5,
  freeSlot: true,
  at,
  ...over,
});

describe('WorkerStallWatch', () => {
  it('reports a stall once the same job waited the whole period with a slot free and nothing started', () => {
    const watch = new WorkerStallWatch(30_000);
    expect(watch.observe('r', look(0))).toBeUndefined();
    expect(watch.observe('r', look(20_000))).toBeUndefined();
    expect(watch.observe('r', look(30_000))).toEqual({ job: 'job-1', since: 0 });
    expect(watch.observe('r', look(45_000))).toEqual({ job: 'job-1', since: 0 });
  });

  it('clears the watch when the worker starts any job', () => {
    const watch = new WorkerStallWatch(30_000);
    watch.observe('r', look(0));
    expect(watch.observe('r', look(20_000, { started: 6 }))).toBeUndefined();
    // The period starts again from the look that saw the new count.
    expect(watch.observe('r', look(45_000, { started: 6 }))).toBeUndefined();
    expect(watch.observe('r', look(50_000, { started: 6 }))).toEqual({
      job: 'job-1',
      since: 20_000,
    });
  });

  it('clears the watch when the queue moves, or empties', () => {
    const watch = new WorkerStallWatch(30_000);
    watch.observe('r', look(0));
    expect(watch.observe('r', look(30_000, { oldestWaiting: 'job-2' }))).toBeUndefined();
    expect(watch.observe('r', look(40_000, { oldestWaiting: undefined }))).toBeUndefined();
    expect(watch.observe('r', look(50_000))).toBeUndefined();
    expect(watch.observe('r', look(79_999))).toBeUndefined();
    expect(watch.observe('r', look(80_000))).toEqual({ job: 'job-1', since: 50_000 });
  });

  it('never reports a worker whose slots are all taken: its jobs wait their turn', () => {
    const watch = new WorkerStallWatch(30_000);
    watch.observe('r', look(0));
    expect(watch.observe('r', look(30_000, { freeSlot: false }))).toBeUndefined();
    expect(watch.observe('r', look(40_000))).toBeUndefined();
    expect(watch.observe('r', look(60_000))).toBeUndefined();
  });

  it('watches routes apart, and forgets removed ones', () => {
    const watch = new WorkerStallWatch(10);
    watch.observe('a', look(0));
    watch.observe('b', look(5));
    expect(watch.observe('a', look(10))).toEqual({ job: 'job-1', since: 0 });
    expect(watch.observe('b', look(10))).toBeUndefined();
    watch.keepOnly(new Set(['b']));
    expect(watch.observe('a', look(20))).toBeUndefined();
    expect(watch.observe('b', look(20))).toEqual({ job: 'job-1', since: 5 });
  });
});
