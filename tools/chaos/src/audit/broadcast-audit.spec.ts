import { auditBroadcast } from './broadcast-audit';

describe('auditBroadcast', () => {
  it('counts recipients reached, copies and those never reached', () => {
    const audit = auditBroadcast([1, 2, 3, 4], [1, 2, 2, 2, 4, 1], 1, 64);
    expect(audit).toEqual({
      recipients: 4,
      reached: 3,
      duplicates: 3,
      duplicated: 2,
      lost: [3],
      stray: [],
      allowed: 64,
    });
  });

  it('names chats that got the message without being recipients', () => {
    expect(auditBroadcast([1], [1, 9, 7, 9], 0, 64)).toMatchObject({ stray: [7, 9], allowed: 0 });
  });
});
