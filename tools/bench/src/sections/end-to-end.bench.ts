import type { BenchContext } from '../harness/bench-context';
export async function endToEndBench(_ctx: BenchContext): Promise<void> {}
