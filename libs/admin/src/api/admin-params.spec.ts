import { BadRequestException, NotFoundException } from '@nestjs/common';
import { cursor, deadLetterFilter, deliveryId, pageSize } from './admin-params';

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
});
