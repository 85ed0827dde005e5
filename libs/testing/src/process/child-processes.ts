import type { ChildProcess } from 'node:child_process';

/**
 * Every process a tool (the bench, the chaos run) starts, so each one is stopped by its
 * PID whatever happens: a step that throws, Ctrl-C, or the tool itself crashing.
 * Nothing else is ever signalled.
 */
const children = new Map<number, { child: ChildProcess; name: string }>();
const interruptCleanups: (() => Promise<unknown>)[] = [];
let handlersInstalled = false;

export function trackChild(child: ChildProcess, name: string): void {
  if (child.pid === undefined) return;
  const pid = child.pid;
  children.set(pid, { child, name });
  child.once('exit', () => children.delete(pid));
}

/** The tracked processes still running. */
export function runningChildren(): { pid: number; name: string }[] {
  return [...children].map(([pid, { name }]) => ({ pid, name }));
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

/**
 * SIGTERM (Relaygram's apps finish or hand back in-flight work, and write their
 * --cpu-prof), SIGKILL after graceMs.
 */
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

export async function stopAllChildren(graceMs = 10_000): Promise<void> {
  await Promise.all([...children.values()].map(({ child }) => stopProcess(child, graceMs)));
}

/** Work to do on Ctrl-C once the processes are stopped (the finally blocks never run). */
export function onInterrupt(cleanup: () => Promise<unknown>): void {
  interruptCleanups.push(cleanup);
}

function killAllNow(): void {
  for (const { child } of children.values()) {
    if (!exited(child)) child.kill('SIGKILL');
  }
}

/**
 * Ctrl-C (or SIGTERM) stops every child by PID, runs the `onInterrupt` cleanups and
 * exits 130; a second one kills at once. Exiting any other way kills those left.
 */
export function installExitHandlers(tool: string): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) {
      killAllNow();
      process.exit(130);
    }
    interrupted = true;
    process.stderr.write(`\n${tool}: ${signal}, stopping ${children.size} processes\n`);
    void stopAllChildren(3_000)
      .then(() => Promise.allSettled(interruptCleanups.map((cleanup) => cleanup())))
      .catch(() => undefined)
      .finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', killAllNow);
}
