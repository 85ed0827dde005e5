import { commandDelta, parseCommandStats } from './command-stats';

const info = (lines: string[]) => ['# Commandstats', ...lines].join('\r\n');

describe('command stats', () => {
  it('counts every command and the script calls among them, leaving out INFO', () => {
    const before = parseCommandStats(
      info([
        'cmdstat_evalsha:calls=10,usec=500,usec_per_call=50.00,rejected_calls=0,failed_calls=0',
        'cmdstat_hset:calls=100,usec=90,usec_per_call=0.90,rejected_calls=0,failed_calls=0',
        'cmdstat_info:calls=3,usec=10,usec_per_call=3.33,rejected_calls=0,failed_calls=0',
      ]),
    );
    const after = parseCommandStats(
      info([
        'cmdstat_evalsha:calls=30,usec=1500,usec_per_call=50.00,rejected_calls=0,failed_calls=0',
        'cmdstat_eval:calls=2,usec=100,usec_per_call=50.00,rejected_calls=0,failed_calls=0',
        'cmdstat_hset:calls=160,usec=150,usec_per_call=0.94,rejected_calls=0,failed_calls=0',
        'cmdstat_blpop:calls=5,usec=20,usec_per_call=4.00,rejected_calls=0,failed_calls=0',
        'cmdstat_info:calls=4,usec=13,usec_per_call=3.25,rejected_calls=0,failed_calls=0',
      ]),
    );
    const delta = commandDelta(before, after);
    expect(delta.scripts).toBe(22);
    expect(delta.commands).toBe(20 + 2 + 60 + 5);
    expect(delta.top[0]).toEqual(['hset', 60]);
    expect(delta.top.map(([name]) => name)).not.toContain('info');
  });

  it('ignores counters that went down (CONFIG RESETSTAT between readings)', () => {
    const before = parseCommandStats(info(['cmdstat_get:calls=50,usec=1']));
    const after = parseCommandStats(info(['cmdstat_get:calls=7,usec=1']));
    expect(commandDelta(before, after)).toEqual({ commands: 0, scripts: 0, top: [] });
  });
});
