import type { Update } from './emulator.types';
import { UpdateQueue } from './update-queue';

const message = (text: string): Update => ({ update_id: 0, message: { text } });

describe('UpdateQueue', () => {
  it('assigns rising ids from its first id', () => {
    const queue = new UpdateQueue(500);
    expect([queue.push(message('a')).update_id, queue.push(message('b')).update_id]).toEqual([
      500, 501,
    ]);
    expect(queue.head()).toBe(500);
    expect(queue.tail).toBe(502);
  });

  it('confirms everything below the offset and nothing above', () => {
    const queue = new UpdateQueue(10);
    ['a', 'b', 'c'].forEach((t) => queue.push(message(t)));
    expect(queue.take(11, 100).updates.map((u) => u.update_id)).toEqual([11, 12]);
    expect(queue.size).toBe(2);
    expect(queue.take(0, 100).updates.map((u) => u.update_id)).toEqual([11, 12]);
  });

  it('reads a negative offset from the tail', () => {
    const queue = new UpdateQueue(10);
    ['a', 'b', 'c'].forEach((t) => queue.push(message(t)));
    expect(queue.take(-1, 100).updates.map((u) => u.update_id)).toEqual([12]);
    expect(queue.size).toBe(1);
  });

  it('treats an offset more than 10 past the tail as no offset', () => {
    const queue = new UpdateQueue(10);
    queue.push(message('a'));
    expect(queue.take(22, 100).updates).toHaveLength(1);
    expect(queue.size).toBe(1);
    expect(queue.take(21, 100).updates).toHaveLength(0);
    expect(queue.size).toBe(0);
  });

  it('gives skipped updates an id without queueing them', () => {
    const queue = new UpdateQueue(1);
    const skipped = queue.skip(message('filtered'));
    const kept = queue.push(message('kept'));
    expect([skipped.update_id, kept.update_id, queue.size]).toEqual([1, 2, 1]);
  });
});
