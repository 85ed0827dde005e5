import type { BenchContext } from '../harness/bench-context';
export async function memoryBench(_ctx: BenchContext): Promise<void> {}
