import { auditOutbox, type MadeSend } from './outbox-audit';

/** The outbox-kill scenario fails on what this finds: each kind of finding must be caught. */
describe('auditOutbox', () => {
  const accepted = new Map<number, number[]>([
    [1, [1, 3, 5]],
    [2, [2, 4]],
  ]);
  const made = (...sends: [number, number][]): MadeSend[] =>
    sends.map(([n, chat]) => ({ n, chat }));

  it('passes every send made once, in order per chat, chats interleaved', () => {
    const audit = auditOutbox(accepted, made([1, 1], [2, 2], [3, 1], [4, 2], [5, 1]));
    expect(audit).toEqual({
      accepted: 5,
      made: 5,
      duplicates: 0,
      lost: [],
      orderViolations: [],
      splitDuplicates: [],
      stray: [],
    });
  });

  it('counts a head made again right after itself as a duplicate, and nothing else', () => {
    const audit = auditOutbox(accepted, made([1, 1], [3, 1], [2, 2], [3, 1], [5, 1], [4, 2]));
    expect(audit.duplicates).toBe(1);
    expect(audit.splitDuplicates).toEqual([]);
    expect(audit.orderViolations).toEqual([]);
  });

  it('finds a lost send', () => {
    expect(auditOutbox(accepted, made([1, 1], [2, 2], [5, 1], [4, 2])).lost).toEqual([3]);
  });

  it('finds a send first made before one accepted earlier in its chat', () => {
    const audit = auditOutbox(accepted, made([3, 1], [1, 1], [5, 1], [2, 2], [4, 2]));
    expect(audit.orderViolations).toEqual([
      'chat 1: o1 (accepted #1) first made after o3 (accepted #2)',
    ]);
  });

  it('finds a duplicate with another send of its chat between the copies', () => {
    const audit = auditOutbox(accepted, made([1, 1], [3, 1], [1, 1], [5, 1], [2, 2], [4, 2]));
    expect(audit.duplicates).toBe(1);
    expect(audit.splitDuplicates).toEqual(['chat 1: o1 made again after o3']);
  });

  it('finds a send never accepted, or made in another chat', () => {
    const audit = auditOutbox(
      accepted,
      made([1, 1], [2, 2], [3, 1], [4, 2], [5, 1], [6, 2], [5, 2]),
    );
    expect(audit.stray).toEqual([
      'o6 made in chat 2, never accepted',
      'o5 made in chat 2, accepted for chat 1',
    ]);
  });
});
