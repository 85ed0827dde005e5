import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old generation grow past what survived the last full collection
 * before it collects again, in percent: 50 allows 1.5x.
 *
 * On a machine with gigabytes of memory V8 allows up to 4x. Under load the dispatcher
 * keeps about 38 MB alive but promotes some 10 MB/s of short-lived objects (deliveries
 * in flight through a scavenge), so its heap reached 140-180 MB between collections and
 * the process 255-272 MB of RSS (tools/bench/README.md, "Bounding the heap's growth").
 * At 1.5x full collections come more often: 166-176 MB of RSS, for 0-3 % more CPU per
 * delivery in alternating bench runs.
 */
export const HEAP_GROWING_PERCENT = 50;

const FLAG = '--heap-growing-percent';

/**
 * The V8 flags a Relaygram process sets on itself at start: the heap's growth bound,
 * unless node was started with its own (`node --heap-growing-percent=N main.js`),
 * which wins. V8 reads this flag each time it sets the next collection's limit, so it
 * applies when set after start.
 */
export function heapGrowthFlags(execArgv: readonly string[]): string[] {
  // V8 takes `_` and `-` alike in a flag's name.
  const own = execArgv.some((arg) => {
    const name = arg.split('=', 1)[0].replace(/_/g, '-');
    return name === FLAG;
  });
  return own ? [] : [`${FLAG}=${HEAP_GROWING_PERCENT}`];
}

/** Applies `heapGrowthFlags` to this process. */
export function boundHeapGrowth(execArgv: readonly string[] = process.execArgv): void {
  for (const flag of heapGrowthFlags(execArgv)) setFlagsFromString(flag);
}
