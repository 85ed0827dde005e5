import type { RecipientResult } from '@relaygram/queue';
import { SettleBatcher } from './settle-batcher';

type Call = { bot: string; id: string; results: RecipientResult[] };

const sent = (index: number): RecipientResult => ({ index, outcome: 'sent' });

function recording(fail: () => boolean = () => false) {
  const calls: Call[] = [];
  const failures: number[] = [];
  const batcher = new SettleBatcher(
    async (bot, id, results) => {
      if (fail()) throw new Error('Redis away');
      calls.push({ bot, id, results: [...results] });
    },
    (_error, _bot, _id, n) => failures.push(n),
    { maxWaiting: 4, delayMs: 20, retryMs: 30 },
  );
  return { batcher, calls, failures };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether a promise has resolved, after the microtasks queued now. */
async function isDone(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await sleep(0);
  return done;
}

describe('SettleBatcher', () => {
  it('settles once enough results wait, one call per broadcast, then resolves their adds', async () => {
    const { batcher, calls } = recording();
    const first = batcher.add('a', 'b1', sent(0));
    void batcher.add('a', 'b2', sent(0));
    void batcher.add('a', 'b1', sent(1));
    expect(calls).toEqual([]);
    expect(await isDone(first)).toBe(false);
    const last = batcher.add('a', 'b1', sent(2));
    await Promise.all([first, last]);
    expect(calls).toEqual([
      { bot: 'a', id: 'b1', results: [sent(0), sent(1), sent(2)] },
      { bot: 'a', id: 'b2', results: [sent(0)] },
    ]);
    expect(batcher.pending).toBe(0);
  });

  it('settles a few results after the delay', async () => {
    const { batcher, calls } = recording();
    const added = batcher.add('a', 'b1', sent(0));
    expect(batcher.pending).toBe(1);
    await sleep(60);
    expect(await isDone(added)).toBe(true);
    expect(calls).toHaveLength(1);
    expect(batcher.pending).toBe(0);
  });

  it('keeps the results of a failed settle and settles them later', async () => {
    let failing = true;
    const { batcher, calls, failures } = recording(() => failing);
    const added = batcher.add('a', 'b1', sent(0));
    expect(await batcher.flush()).toBe(false);
    expect(failures).toEqual([1]);
    expect(batcher.pending).toBe(1);
    expect(await isDone(added)).toBe(false);
    failing = false;
    await added;
    expect(calls).toEqual([{ bot: 'a', id: 'b1', results: [sent(0)] }]);
    expect(batcher.pending).toBe(0);
  });

  it('on close, tries a few times, says what could not be settled, and lets every add end', async () => {
    const { batcher, failures } = recording(() => true);
    const adds = [batcher.add('a', 'b1', sent(0)), batcher.add('a', 'b1', sent(1))];
    expect(await batcher.close(3)).toBe(2);
    expect(failures).toEqual([2, 2, 2]);
    await Promise.all(adds);
    // Closed: nothing more is settled.
    await batcher.add('a', 'b1', sent(2));
    expect(batcher.pending).toBe(0);
  });

  it('on close, settles what waits', async () => {
    const { batcher, calls } = recording();
    const added = batcher.add('a', 'b1', sent(0));
    expect(await batcher.close()).toBe(0);
    await added;
    expect(calls).toEqual([{ bot: 'a', id: 'b1', results: [sent(0)] }]);
  });
});
