import { DEFAULT_OUTBOUND } from '@relaygram/config';
import { OutboundKeys } from '@relaygram/contracts';
import { broadcastParams, budgetParams } from '../budget/budget-params';
import type { CallPlan } from '../budget/call-plan';
import { decodeAnswer, ReservationBatches } from './reservation-batch';

const keys = new OutboundKeys('{rg}');
const p = budgetParams(DEFAULT_OUTBOUND);
const other = budgetParams({ ...DEFAULT_OUTBOUND, perSecond: 10 });
const PARAMS = ['5000', '100', '1000', '3', '20', '60000', '100', '3', '53'];

const to = (key: string, kind: 'private' | 'group', cost = 1): CallPlan => ({
  paced: true,
  chat: { key, kind },
  cost,
});

describe('ReservationBatches', () => {
  it("names each bot's pauses and calendar once, then one argument per reservation", () => {
    const command = new ReservationBatches(keys).command([
      { botId: 'a', plan: to('1', 'private'), params: p, now: undefined },
      { botId: 'b', plan: to('-5', 'group', 3), params: p, now: undefined },
      { botId: 'a', plan: { paced: true, cost: 1 }, params: p, now: undefined },
      { botId: 'a', plan: to('@news', 'group'), params: other, now: undefined },
    ]);
    expect(command.keys).toEqual([
      keys.pauses('a'),
      keys.bins('a'),
      keys.pauses('b'),
      keys.bins('b'),
    ]);
    expect(command.numKeys).toBe(4);
    // Every key of an install shares its hash tag, so one batch is legal on a cluster.
    expect(command.keys.every((key) => key.startsWith('{rg}:'))).toBe(true);
    expect(command.argv).toEqual([
      '2',
      '3',
      // sections: a with p, b with p, a with `other`
      '1',
      '',
      ...PARAMS,
      '2',
      '',
      ...PARAMS,
      '1',
      '',
      ...budgetParamsArgs(other),
      // reservations: section:cost:kind and chat
      '1:1:p1',
      '2:3:g-5',
      '1:1:-',
      '3:1:g@news',
    ]);
  });

  it('gives a clock of its own its own section', () => {
    const command = new ReservationBatches(keys).command([
      { botId: 'a', plan: to('1', 'private'), params: p, now: 1_000 },
      { botId: 'a', plan: to('1', 'private'), params: p, now: 2_000 },
      { botId: 'a', plan: to('1', 'private'), params: p, now: 1_000 },
    ]);
    expect(command.argv.slice(0, 2)).toEqual(['1', '2']);
    expect(command.argv.slice(2 + 22)).toEqual(['1:1:p1', '2:1:p1', '1:1:p1']);
  });

  it("gives a bot's broadcasts a section of their own on the bot's calendar", () => {
    const broadcast = broadcastParams(p, 0.8);
    const command = new ReservationBatches(keys).command([
      { botId: 'a', plan: to('1', 'private'), params: p, now: undefined },
      { botId: 'a', plan: to('2', 'private'), params: broadcast, now: undefined },
      { botId: 'a', plan: to('3', 'private'), params: broadcast, now: undefined },
    ]);
    // One bot (one pauses key, one calendar), two sections naming it: the script keeps
    // a calendar per bot, so the two see each other's sends.
    expect(command.keys).toEqual([keys.pauses('a'), keys.bins('a')]);
    expect(command.argv).toEqual([
      '1',
      '2',
      '1',
      '',
      ...PARAMS,
      '1',
      '',
      ...PARAMS.slice(0, 7),
      '2',
      PARAMS[8],
      '1:1:p1',
      '2:1:p2',
      '2:1:p3',
    ]);
  });

  it("names a chat's and a group's keys as the script builds them from the bot's pauses key", () => {
    // ACQUIRE_LUA: `<bot's keys>pauses` -> `<bot's keys>chat:<chat>`, `<bot's keys>group:<chat>`.
    for (const bot of ['a', 'shop-bot', 'bot_2']) {
      const base = keys.pauses(bot).slice(0, -'pauses'.length);
      expect(keys.chat(bot, '-100123')).toBe(`${base}chat:-100123`);
      expect(keys.group(bot, '@news')).toBe(`${base}group:@news`);
    }
  });
});

function budgetParamsArgs(q: typeof p): string[] {
  return [
    q.maxWaitMs,
    q.transitMs,
    q.chatIntervalMs,
    q.chatBurst,
    q.groupLimit,
    q.groupWindowMs,
    q.binWidthMs,
    q.binCapacity,
    q.ringSize,
  ].map(String);
}

describe('decodeAnswer', () => {
  it('reads a code and a time as a decision, and an error text as an error', () => {
    expect(decodeAnswer(0, 0)).toEqual({ ok: true, waitMs: 0 });
    expect(decodeAnswer(0, 12)).toEqual({ ok: true, waitMs: 12 });
    expect(decodeAnswer(2, 900)).toEqual({ ok: true, waitMs: 900, binding: 'chat' });
    expect(decodeAnswer(4, 40)).toEqual({ ok: true, waitMs: 40, binding: 'bot' });
    expect(decodeAnswer(-1, 3_000)).toEqual({ ok: false, retryInMs: 3_000, binding: 'pause' });
    expect(decodeAnswer(-3, 61_000)).toEqual({ ok: false, retryInMs: 61_000, binding: 'group' });
    const error = decodeAnswer('WRONGTYPE Operation against a key', 0);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain('WRONGTYPE');
  });
});
