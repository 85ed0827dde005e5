import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage } from '@relaygram/contracts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileReport {
  file: string;
  totalMs: number;
  idleMs: number;
  /** Self time by function, heaviest first. */
  selfByFunction: [string, number][];
  /** For each of the heaviest functions, its callers by the self time spent under them. */
  callers: Map<string, [string, number][]>;
  /** Self time by package (node_modules/<pkg>), Relaygram lib or app, or Node internals. */
  selfByModule: [string, number][];
  /** Time inside Relaygram's own functions, callees included. */
  inclusiveRelaygram: [string, number][];
  /** Time with a package (or Relaygram lib) anywhere on the stack. */
  inclusiveByModule: [string, number][];
}

const META = new Set(['(idle)', '(program)', '(garbage collector)', '(root)']);

/** libs/<x>, apps/<x>, node_modules/<pkg>, node:internal, or the meta frame itself. */
export function moduleOf(url: string, functionName: string): string {
  if (!url) return META.has(functionName) ? functionName : '(native)';
  const path = url.replace(/^file:\/\//, '');
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (pkg) return pkg[1];
  const own = /\/((?:libs|apps|tools)\/[^/]+)\//.exec(path);
  if (own) return own[1];
  if (path.startsWith('node:')) return 'node internals';
  return path;
}

function shortUrl(url: string): string {
  const path = url.replace(/^file:\/\//, '');
  const at = path.search(/(node_modules|libs|apps|tools)\//);
  return at >= 0 ? path.slice(at).replace(/^node_modules\//, '') : path;
}

function keyOf(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  if (!url) return functionName || '(anonymous)';
  return `${functionName || '(anonymous)'} ${shortUrl(url)}:${lineNumber + 1}`;
}

function isInternal(node: ProfileNode): boolean {
  const { url, functionName } = node.callFrame;
  return url ? url.startsWith('node:') : !META.has(functionName);
}

function top(map: Map<string, number>, n: number): [string, number][] {
  return [...map].sort((a, b) => b[1] - a[1]).slice(0, n);
}

export function analyzeProfile(profile: CpuProfile, file = ''): ProfileReport {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map<number, ProfileNode>();
  for (const node of profile.nodes) {
    for (const child of node.children ?? []) parentOf.set(child, node);
  }
  const callerTime = new Map<string, Map<string, number>>();
  const selfUs = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  let totalUs = 0;
  let idleUs = 0;
  const selfByFunction = new Map<string, number>();
  const selfByModule = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node) continue;
    totalUs += us;
    if (node.callFrame.functionName === '(idle)') idleUs += us;
    const key = keyOf(node);
    selfByFunction.set(key, (selfByFunction.get(key) ?? 0) + us / 1000);
    // The nearest caller outside Node's internals, so that a native frame like writev
    // says whose write it is (a log line, an HTTP answer, an outgoing request).
    let parent = parentOf.get(node.id);
    while (parent && isInternal(parent) && parentOf.has(parent.id)) {
      parent = parentOf.get(parent.id);
    }
    if (parent) {
      const byCaller = callerTime.get(key) ?? new Map<string, number>();
      const callerKey = keyOf(parent);
      byCaller.set(callerKey, (byCaller.get(callerKey) ?? 0) + us / 1000);
      callerTime.set(key, byCaller);
    }
    const mod = moduleOf(node.callFrame.url, node.callFrame.functionName);
    selfByModule.set(mod, (selfByModule.get(mod) ?? 0) + us / 1000);
  }

  // Inclusive time of Relaygram functions and of every package: a function or package
  // counts once per stack even when it recurses or calls back into itself, so nested
  // calls are not added twice.
  const inclusive = new Map<string, number>();
  const inclusiveByModule = new Map<string, number>();
  const root = profile.nodes[0];
  const visit = (node: ProfileNode, onStack: Set<string>, modules: Set<string>): number => {
    let total = selfUs.get(node.id) ?? 0;
    const key = keyOf(node);
    const own = /(?:^|\/)(libs|apps)\//.test(shortUrl(node.callFrame.url)) && !onStack.has(key);
    const mod = node.callFrame.url.startsWith('file:') ? moduleOf(node.callFrame.url, '') : '';
    const newModule = mod !== '' && !modules.has(mod);
    if (own) onStack.add(key);
    if (newModule) modules.add(mod);
    for (const childId of node.children ?? []) {
      const child = byId.get(childId);
      if (child) total += visit(child, onStack, modules);
    }
    if (own) {
      onStack.delete(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + total / 1000);
    }
    if (newModule) {
      modules.delete(mod);
      inclusiveByModule.set(mod, (inclusiveByModule.get(mod) ?? 0) + total / 1000);
    }
    return total;
  };
  if (root) visit(root, new Set(), new Set());

  const heaviest = top(selfByFunction, 20).filter(([k]) => k !== '(idle)');
  const callers = new Map<string, [string, number][]>();
  for (const [key] of heaviest.slice(0, 6)) {
    const byCaller = callerTime.get(key);
    if (byCaller) callers.set(key, top(byCaller, 3));
  }
  return {
    file,
    totalMs: totalUs / 1000,
    idleMs: idleUs / 1000,
    selfByFunction: heaviest,
    callers,
    selfByModule: top(selfByModule, 12).filter(([k]) => k !== '(idle)'),
    inclusiveRelaygram: top(inclusive, 15),
    inclusiveByModule: top(inclusiveByModule, 15),
  };
}

export function formatProfile(report: ProfileReport): string {
  const busy = report.totalMs - report.idleMs;
  const pct = (ms: number) => `${((ms / Math.max(busy, 1)) * 100).toFixed(1).padStart(5)}%`;
  const lines = [
    `${report.file}: ${Math.round(busy)} ms busy of ${Math.round(report.totalMs)} ms sampled`,
    '  self time by module:',
    ...report.selfByModule.map(([k, ms]) => `    ${pct(ms)}  ${k}`),
    '  self time by function:',
    ...report.selfByFunction
      .slice(0, 15)
      .flatMap(([k, ms]) => [
        `    ${pct(ms)}  ${k}`,
        ...(report.callers.get(k) ?? []).map(([c, cms]) => `             ${pct(cms)} from ${c}`),
      ]),
    '  packages and libs on the stack, callees included:',
    ...report.inclusiveByModule.map(([k, ms]) => `    ${pct(ms)}  ${k}`),
    '  Relaygram functions, callees included:',
    ...report.inclusiveRelaygram.map(([k, ms]) => `    ${pct(ms)}  ${k}`),
  ];
  return lines.join('\n');
}

/** The hot spots of every .cpuprofile in a directory (percentages of busy time). */
export function summarizeProfiles(dir: string): string {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort();
  if (!files.length) return `no profiles in ${dir}`;
  return [
    `CPU profiles in ${dir}:`,
    ...files.map((file) => {
      try {
        const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
        return formatProfile(analyzeProfile(profile, file));
      } catch (error) {
        return `${file}: unreadable (${errorMessage(error)})`;
      }
    }),
  ].join('\n\n');
}
