import type { ChildProcess } from 'node:child_process';

/**
 * Every process the chaos run starts, so each one is stopped by its PID whatever
 * happens: a scenario that throws, Ctrl-C, or the run itself crashing. Nothing else is
 * ever signalled.
 */
const children = new Map<number, { child: ChildProcess; name: string }>();
let handlersInstalled = false;

export function track(child: ChildProcess, name: string): void {
  if (child.pid === undefined) return;
  const pid = child.pid;
  children.set(pid, { child, name });
  child.once('exit', () => children.delete(pid));
}

export function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Resolves once the child has exited (at once when it already has). */
export function exitOf(child: ChildProcess): Promise<void> {
  if (exited(child)) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** kill -9, and wait until the kernel has reaped it. */
export async function killHard(child: ChildProcess): Promise<void> {
  if (exited(child)) return;
  const gone = exitOf(child);
  child.kill('SIGKILL');
  await gone;
}

/** SIGTERM (the apps finish in-flight work), SIGKILL after graceMs. */
export async function stopProcess(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (exited(child)) return;
  const gone = exitOf(child);
  child.kill('SIGTERM');
  const timer = setTimeout(() => {
    if (!exited(child)) child.kill('SIGKILL');
  }, graceMs);
  await gone;
  clearTimeout(timer);
}

export async function stopAll(graceMs = 10_000): Promise<void> {
  await Promise.all([...children.values()].map(({ child }) => stopProcess(child, graceMs)));
}

function killAllNow(): void {
  for (const { child } of children.values()) {
    if (!exited(child)) child.kill('SIGKILL');
  }
}

/** Ctrl-C stops every child by PID; exiting any other way kills those left. */
export function installExitHandlers(onInterrupt: () => Promise<unknown>): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) {
      killAllNow();
      process.exit(130);
    }
    interrupted = true;
    process.stderr.write(`\nchaos: ${signal}, stopping ${children.size} processes\n`);
    void stopAll(3_000)
      .then(() => onInterrupt())
      .catch(() => undefined)
      .finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', killAllNow);
}
