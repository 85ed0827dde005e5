/** Polls `condition` every `intervalMs` until it holds; fails after `timeoutMs`. */
export async function until(
  condition: () => boolean,
  { timeoutMs = 5_000, intervalMs = 5 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
