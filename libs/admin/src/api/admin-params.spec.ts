import { BadRequestException, NotFoundException } from '@nestjs/common';
import {
  attemptQuery,
  cursor,
  deadLetterFilter,
  deliveryId,
  pageSize,
  updateIdParam,
} from './admin-params';

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

describe('admin API parameters', () => {
  it('reads a dead-letter filter', () => {
    expect(deadLetterFilter({})).toEqual({});
    expect(deadLetterFilter({ route: 'site', bot: 'sol-prod', reason: 'poison' })).toEqual({
      route: 'site',
      bot: 'sol-prod',
      reason: 'poison',
    });
    expect(deadLetterFilter({ route: '', reason: undefined })).toEqual({});
    // Outbox sends that failed: the outbox's route, whose name no configured route has.
    expect(deadLetterFilter({ route: '_outbox' })).toEqual({ route: '_outbox' });
    expect(problem(() => deadLetterFilter({ bot: '_outbox' }))).toMatchObject({ parameter: 'bot' });
    expect(problem(() => deadLetterFilter({ route: '_other' }))).toMatchObject({
      parameter: 'route',
    });
  });

  it('names the parameter that is wrong', () => {
    expect(problem(() => deadLetterFilter({ route: 'Site' }))).toMatchObject({
      parameter: 'route',
    });
    expect(problem(() => deadLetterFilter({ bot: ['a', 'b'] }))).toEqual({
      error: 'bot: give it once',
      parameter: 'bot',
    });
    expect(problem(() => deadLetterFilter({ reason: 'lost' }))).toEqual({
      error: 'reason: must be one of rejected, poison, expired, route_removed',
      parameter: 'reason',
    });
    for (const limit of ['0', '501', '1.5', '-1', 'x'])
      expect(problem(() => pageSize({ limit }))).toMatchObject({ parameter: 'limit' });
    expect(problem(() => cursor({ cursor: 'abc' }))).toMatchObject({ parameter: 'cursor' });
  });

  it('takes sane page sizes and cursors', () => {
    expect(pageSize({})).toBe(50);
    expect(pageSize({ limit: '500' })).toBe(500);
    expect(cursor({ cursor: '1790000000000:3' })).toBe('1790000000000:3');
    expect(cursor({})).toBeUndefined();
  });

  it('treats an impossible delivery id as not found', () => {
    expect(deliveryId('0b8e0f8e-1a2b-4c3d-8e9f-0123456789ab')).toBe(
      '0b8e0f8e-1a2b-4c3d-8e9f-0123456789ab',
    );
    expect(problem(() => deliveryId('../../etc'))).toEqual({
      error: 'unknown dead letter: ../../etc',
    });
  });

  it('reads an attempts query: status class, ISO or ms times, stream id cursor, limit', () => {
    expect(attemptQuery({})).toEqual({ limit: 50 });
    expect(
      attemptQuery({
        status: 'failed',
        since: '2026-01-02T03:04:05Z',
        until: '1767323045000',
        cursor: '1767323045000-3',
        limit: '200',
      }),
    ).toEqual({
      status: 'failed',
      since: Date.parse('2026-01-02T03:04:05Z'),
      until: 1_767_323_045_000,
      cursor: '1767323045000-3',
      limit: 200,
    });
    for (const [params, parameter] of [
      [{ status: '2XX' }, 'status'],
      [{ since: 'last week' }, 'since'],
      [{ until: '2026-13-40' }, 'until'],
      [{ cursor: '17673-x' }, 'cursor'],
      [{ limit: '1.5' }, 'limit'],
    ] as const) {
      expect(problem(() => attemptQuery(params))).toMatchObject({ parameter });
    }
  });

  it('takes a non-negative integer as an update id', () => {
    expect(updateIdParam('0')).toBe(0);
    expect(updateIdParam('123456789')).toBe(123_456_789);
    for (const raw of ['-1', '1e3', '0x10', '', '99999999999999999'])
      expect(problem(() => updateIdParam(raw))).toMatchObject({ parameter: 'updateId' });
  });
});
