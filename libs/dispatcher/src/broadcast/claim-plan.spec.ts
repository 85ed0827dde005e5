import { outboundOf, type OutboundConfig } from '@relaygram/config';
import { chatIdOf, claimAhead, claimShares, fairShares, sharesOf } from './claim-plan';

describe('fairShares', () => {
  it('splits free slots evenly, every slot handed out', () => {
    expect(fairShares(64, 1, 0)).toEqual([64]);
    expect(fairShares(64, 4, 0)).toEqual([16, 16, 16, 16]);
    expect(fairShares(10, 3, 0)).toEqual([4, 3, 3]);
    expect(fairShares(10, 3, 1)).toEqual([3, 4, 3]);
    expect(fairShares(0, 2, 5)).toEqual([0, 0]);
    expect(fairShares(3, 0, 0)).toEqual([]);
  });

  it('gives each broadcast its turn when there are fewer slots than broadcasts', () => {
    const got = [0, 0, 0, 0, 0];
    for (let turn = 0; turn < 10; turn++) {
      const shares = fairShares(2, 5, turn * 2);
      expect(shares.reduce((a, b) => a + b, 0)).toBe(2);
      shares.forEach((n, i) => (got[i] += n));
    }
    expect(got).toEqual([4, 4, 4, 4, 4]);
  });
});

describe('chatIdOf', () => {
  it('sends numeric ids as numbers and usernames as text', () => {
    expect(chatIdOf('123456789')).toBe(123_456_789);
    expect(chatIdOf('-1001234567890')).toBe(-1_001_234_567_890);
    expect(chatIdOf('@shop_channel')).toBe('@shop_channel');
    expect(chatIdOf('12a')).toBe('12a');
    expect(chatIdOf('')).toBe('');
  });

  it('keeps ids a number cannot hold exactly as text', () => {
    expect(chatIdOf('9007199254740993')).toBe('9007199254740993');
    expect(chatIdOf('12345678901234567890')).toBe('12345678901234567890');
  });
});

describe('claimShares', () => {
  const room = (entries: Record<string, number>) => new Map(Object.entries(entries));

  it('hands every free slot out when nothing is held', () => {
    const grants = claimShares(
      64,
      64,
      [
        { bot: 'a', held: 0 },
        { bot: 'b', held: 0 },
      ],
      room({ a: 64, b: 64 }),
      0,
    );
    expect(grants).toEqual([32, 32]);
  });

  it('gives the slots a fast broadcast frees back to it, not to one piling them up', () => {
    // `slow` holds 40 slots waiting for its pacing, `fast` 4: the 20 free go to `fast`.
    const candidates = [
      { bot: 'slow', held: 40 },
      { bot: 'fast', held: 4 },
    ];
    expect(claimShares(20, 64, candidates, room({ slow: 64, fast: 64 }), 0)).toEqual([0, 20]);
    expect(claimShares(20, 64, candidates, room({ slow: 64, fast: 64 }), 1)).toEqual([0, 20]);
  });

  it('lets one broadcast use the slots the others do not want', () => {
    const candidates = [
      { bot: 'a', held: 30 },
      { bot: 'b', held: 0 },
    ];
    // `b`'s bot may hold 5 more: the rest of the free slots go to `a`.
    expect(claimShares(34, 64, candidates, room({ a: 64, b: 5 }), 0)).toEqual([29, 5]);
  });

  it("never claims beyond a bot's room, shared by its broadcasts", () => {
    const candidates = [
      { bot: 'a', held: 0 },
      { bot: 'a', held: 0 },
      { bot: 'b', held: 0 },
    ];
    const grants = claimShares(64, 64, candidates, room({ a: 10, b: 64 }), 0);
    expect(grants[0] + grants[1]).toBe(10);
    expect(grants.reduce((x, y) => x + y, 0)).toBe(64);
    expect(claimShares(64, 64, candidates, room({}), 0)).toEqual([0, 0, 0]);
  });
});

describe('claimAhead', () => {
  const bot = (outbound: Partial<OutboundConfig>) => ({
    outbound: { ...outboundOf({}), ...outbound },
  });

  it("is about a second of the bot's broadcast budget, within 1 and the slots", () => {
    expect(claimAhead(bot({}), 64)).toBe(24);
    expect(claimAhead(bot({ perSecond: 200, broadcastShare: 0.5 }), 64)).toBe(64);
    expect(claimAhead(bot({ perSecond: 10, broadcastShare: 0.25 }), 64)).toBe(3);
    expect(claimAhead(bot({ broadcastShare: 0 }), 64)).toBe(1);
    expect(claimAhead(bot({ enabled: false }), 64)).toBe(64);
    expect(claimAhead({}, 64)).toBe(24);
  });
});

describe('sharesOf', () => {
  const config = (id: string, perSecond: number) =>
    ({ id, outbound: { ...outboundOf({}), perSecond, broadcastShare: 0.5 } }) as never;

  it("counts what each broadcast and bot holds, and each bot's room from its config", () => {
    const ready = [
      { bot: 'slow', id: 'b1' },
      { bot: 'fast', id: 'b2' },
      { bot: 'gone', id: 'b3' },
    ];
    const inFlight = [
      ...Array.from({ length: 8 }, () => ({ key: 'slow/b1', bot: 'slow' })),
      { key: 'slow/b0', bot: 'slow' },
    ];
    // slow: 10/s x 0.5 -> room 5, used up by its two broadcasts; fast and gone (no
    // longer configured) their parts (21 each of 64), and fast, first in turn after
    // slow, the 13 slots left.
    const shares = sharesOf(ready, inFlight, [config('slow', 10), config('fast', 1000)], 55, 0);
    expect(shares).toEqual([0, 34, 21]);
  });
});
