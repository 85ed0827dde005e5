import type { Parameters } from 'fast-check';

/**
 * Run parameters for fast-check properties: `numRuns` unless FC_NUM_RUNS says otherwise,
 * and FC_SEED / FC_PATH to replay a failure exactly as fast-check printed it. CI sets a
 * fixed FC_SEED so a run is repeatable; without one every run explores new inputs.
 */
export function fuzzParameters(numRuns: number): Parameters<unknown> {
  return {
    numRuns: Number(process.env.FC_NUM_RUNS) || numRuns,
    ...(process.env.FC_SEED ? { seed: Number(process.env.FC_SEED) } : {}),
    ...(process.env.FC_PATH ? { path: process.env.FC_PATH } : {}),
  };
}
