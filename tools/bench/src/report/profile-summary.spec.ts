import { analyzeProfile, moduleOf } from './profile-summary';

const frame = (functionName: string, url = '', lineNumber = 0) => ({
  functionName,
  url,
  lineNumber,
});

describe('moduleOf', () => {
  it('names the package, the Relaygram project or Node internals a frame belongs to', () => {
    expect(moduleOf('file:///w/node_modules/pino/lib/tools.js', 'asJson')).toBe('pino');
    expect(moduleOf('file:///w/node_modules/@pinojs/redact/index.js', 'redact')).toBe(
      '@pinojs/redact',
    );
    expect(moduleOf('file:///w/libs/queue/dist/lanes/lane-store.js', 'finish')).toBe('libs/queue');
    expect(moduleOf('node:internal/stream_base_commons', 'writevGeneric')).toBe('node internals');
    expect(moduleOf('', '(garbage collector)')).toBe('(garbage collector)');
    expect(moduleOf('', 'writev')).toBe('(native)');
  });
});

describe('analyzeProfile', () => {
  // (root) -> handler (libs/ingress) -> asJson (pino) -> writev (native)
  //                                  -> enqueue (libs/queue)
  const profile = {
    nodes: [
      { id: 1, callFrame: frame('(root)'), children: [2, 6] },
      {
        id: 2,
        callFrame: frame('handler', 'file:///w/libs/ingress/dist/a.js', 9),
        children: [3, 5],
      },
      {
        id: 3,
        callFrame: frame('asJson', 'file:///w/node_modules/pino/lib/tools.js'),
        children: [4],
      },
      { id: 4, callFrame: frame('writev') },
      { id: 5, callFrame: frame('enqueue', 'file:///w/libs/queue/dist/b.js', 19) },
      { id: 6, callFrame: frame('(idle)') },
    ],
    samples: [2, 3, 4, 4, 5, 6, 6],
    timeDeltas: [1000, 1000, 1000, 1000, 2500, 3000, 3000],
  };

  it('adds self time per function and per module, idle apart', () => {
    const report = analyzeProfile(profile);
    expect(report.totalMs).toBe(12.5);
    expect(report.idleMs).toBe(6);
    expect(report.selfByFunction[0]).toEqual(['enqueue libs/queue/dist/b.js:20', 2.5]);
    expect(new Map(report.selfByModule).get('(native)')).toBe(2);
    expect(report.selfByFunction.some(([k]) => k === '(idle)')).toBe(false);
  });

  it('attributes a native frame to its nearest caller outside Node', () => {
    const report = analyzeProfile(profile);
    expect(report.callers.get('writev')).toEqual([['asJson pino/lib/tools.js:1', 2]]);
  });

  it('counts callees in the inclusive time of Relaygram functions and packages', () => {
    const report = analyzeProfile(profile);
    const own = new Map(report.inclusiveRelaygram);
    expect(own.get('handler libs/ingress/dist/a.js:10')).toBe(6.5);
    expect(own.get('enqueue libs/queue/dist/b.js:20')).toBe(2.5);
    const modules = new Map(report.inclusiveByModule);
    expect(modules.get('libs/ingress')).toBe(6.5);
    expect(modules.get('pino')).toBe(3);
  });
});
