import { PendingCounts } from './pending-counts';

describe('PendingCounts', () => {
  it('adds counts by key and field, and starts again from nothing once taken', () => {
    const pending = new PendingCounts();
    pending.add('k:1', 1, 'delivered', 1);
    pending.add('k:1', 1, 'delivered', 2);
    pending.add('k:1', 1, 'l3', 1);
    pending.add('k:2', 2, 'accepted', 1);
    const taken = pending.take();
    expect(pending.size).toBe(0);
    expect(Object.fromEntries(taken.get('k:1')!.fields)).toEqual({ delivered: 3, l3: 1 });
    expect(taken.get('k:2')).toMatchObject({ minute: 2 });
  });

  it('puts back a failed flush on top of what came since, dropping minutes past the hour', () => {
    const pending = new PendingCounts();
    pending.add('k:1', 1, 'delivered', 2);
    pending.add('k:9', 9, 'failed', 1);
    const failed = pending.take();
    pending.add('k:9', 9, 'failed', 4);
    pending.add('k:0', 0, 'failed', 4);
    pending.merge(failed, 5);
    const left = pending.take();
    expect([...left.keys()]).toEqual(['k:9']);
    expect(left.get('k:9')!.fields.get('failed')).toBe(5);
  });
});
