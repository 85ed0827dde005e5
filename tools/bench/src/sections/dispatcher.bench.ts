import type { BenchContext } from '../harness/bench-context';
export async function dispatcherBench(_ctx: BenchContext): Promise<void> {}
