import type { BenchContext } from '../harness/bench-context';
export async function gatewayBench(_ctx: BenchContext): Promise<void> {}
