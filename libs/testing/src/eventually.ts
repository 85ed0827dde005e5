import { errorMessage } from '@relaygram/contracts';

export interface EventuallyOptions {
  /** Fails after this long. */
  timeoutMs?: number;
  /** The sleep between two polls. */
  intervalMs?: number;
  /** Names the condition in the failure. */
  what?: string;
  /**
   * A check that throws means "not yet" (a server still starting), and the last error goes
   * into the failure; without it the first error fails at once.
   */
  retryErrors?: boolean;
}

/**
 * Polls `check`, sleeping between polls, until it returns something other than undefined or
 * false, and returns that; fails after `timeoutMs`.
 */
export async function eventually<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  {
    timeoutMs = 10_000,
    intervalMs = 25,
    what = 'condition',
    retryErrors = false,
  }: EventuallyOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      if (!retryErrors) throw error;
      last = error;
    }
    if (Date.now() > deadline) {
      const cause = last === undefined ? '' : ` (last error: ${errorMessage(last)})`;
      throw new Error(`${what} not met within ${timeoutMs} ms${cause}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
