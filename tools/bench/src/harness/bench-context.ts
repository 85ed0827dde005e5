import type { Row } from '../report/results';
import type { BenchChild } from './bench-child';
import type { HeapStats } from './proc-stats';
import type { AppName, LaunchOptions } from './relaygram-install';
import type { RedisTarget } from './redis-target';

export interface BenchOptions {
  quick: boolean;
  jsonPath: string;
  only?: readonly SectionName[];
  launch: LaunchOptions;
  /**
   * The "off" side of each on/off comparison (pacing, the delivery log) runs with the
   * "on" side's config: an A/A run, whose ratios show how far the bench's noise alone
   * moves them on this box.
   */
  sameSides?: boolean;
}

export const SECTIONS = [
  'ingress',
  'dispatcher',
  'e2e',
  'gateway',
  'memory',
  'pull',
  'broadcast',
] as const;
export type SectionName = (typeof SECTIONS)[number];

/** What every section gets: the options, the shared Redis, the emulator, and where rows go. */
export interface BenchContext {
  options: BenchOptions;
  /** Key prefix of this run; each measurement adds its own suffix. */
  runPrefix: string;
  redis: RedisTarget;
  /** The Telegram emulator (TELEGRAM_API_BASE of every app) and the bot every section uses. */
  emulator: {
    child: BenchChild;
    apiRoot: string;
    bot: { token: string; id: number; username: string };
  };
  rows: Row[];
  /** Peak RSS of each app, filled by the sections that load them, for the memory rows. */
  rss: Partial<Record<AppName, number>>;
  /** Peak RSS of the baselines under the same load, as a reference for the apps'. */
  referenceRss: Partial<Record<'B1' | 'B4', number>>;
  /** RSS of each app right after start-up, for comparison with its peak. */
  idleRss: Partial<Record<AppName, number>>;
  /** Heap figures of each app taken at the end of its load, to explain its RSS. */
  heap: Partial<Record<AppName, HeapStats>>;
  /** Numbers behind the rows, written to the JSON file. */
  details: Record<string, unknown>;
  log(message: string): void;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
