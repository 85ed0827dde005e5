import { BadRequestException, NotFoundException } from '@nestjs/common';
import { botParam, broadcastRef, failureReason, offsetParam } from './broadcast-params';

function problem(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    if (error instanceof BadRequestException || error instanceof NotFoundException)
      return error.getResponse();
    throw error;
  }
  return undefined;
}

describe('admin API broadcast parameters', () => {
  it('takes a broadcast that could exist, and finds none of the others', () => {
    const id = '0b7f3c1e-5a40-4c55-9d7e-3f2a8c1b9e60';
    expect(broadcastRef('shop-bot', id)).toEqual({ bot: 'shop-bot', id });
    expect(problem(() => broadcastRef('Shop', id))).toEqual({
      error: `unknown broadcast: Shop/${id}`,
    });
    expect(problem(() => broadcastRef('shop-bot', 'a b'))).toEqual({
      error: 'unknown broadcast: shop-bot/a b',
    });
    expect(problem(() => broadcastRef('shop-bot', 'x'.repeat(129)))).toMatchObject({
      error: expect.stringMatching(/^unknown broadcast: shop-bot\/x+…$/),
    });
  });

  it('reads an offset from 0 to its maximum, naming it when wrong', () => {
    expect(offsetParam({}, 10)).toBe(0);
    expect(offsetParam({ offset: '' }, 10)).toBe(0);
    expect(offsetParam({ offset: '10' }, 10)).toBe(10);
    for (const offset of ['11', '-1', '1.5', 'x', ' 1'])
      expect(problem(() => offsetParam({ offset }, 10))).toEqual({
        error: 'offset: must be an integer from 0 to 10',
        parameter: 'offset',
      });
    expect(problem(() => offsetParam({ offset: ['1', '2'] }, 10))).toMatchObject({
      parameter: 'offset',
    });
  });

  it('reads the bot filter and the failure reason', () => {
    expect(botParam({})).toBeUndefined();
    expect(botParam({ bot: 'news-bot' })).toBe('news-bot');
    expect(problem(() => botParam({ bot: '_outbox' }))).toMatchObject({ parameter: 'bot' });
    expect(failureReason({})).toBe('blocked');
    expect(failureReason({ reason: 'failed' })).toBe('failed');
    expect(problem(() => failureReason({ reason: 'sent' }))).toEqual({
      error: 'reason: must be one of blocked, failed',
      parameter: 'reason',
    });
  });
});
