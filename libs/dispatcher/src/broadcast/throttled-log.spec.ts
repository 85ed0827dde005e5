import type { Logger } from 'pino';
import { ThrottledLog } from './throttled-log';

describe('ThrottledLog', () => {
  it('writes the first line at once, then one per period with the count since the last', () => {
    const lines: [object, string][] = [];
    const logger = { warn: (fields: object, msg: string) => lines.push([fields, msg]) };
    const log = new ThrottledLog(logger as unknown as Logger, 1_000);
    log.warn('b1/500', { bot: 'a' }, 'retry', 0);
    log.warn('b1/500', { bot: 'a' }, 'retry', 10);
    log.warn('b1/500', { bot: 'a' }, 'retry', 500);
    log.warn('b1/429', { bot: 'a' }, 'too many', 600);
    log.warn('b1/500', { bot: 'a' }, 'retry', 1_000);
    expect(lines).toEqual([
      [{ bot: 'a', count: 1 }, 'retry'],
      [{ bot: 'a', count: 1 }, 'too many'],
      [{ bot: 'a', count: 3 }, 'retry'],
    ]);
    log.forget('b1/');
    log.warn('b1/500', { bot: 'a' }, 'retry', 1_001);
    expect(lines).toHaveLength(4);
  });
});
