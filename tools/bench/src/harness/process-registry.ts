import type { ChildProcess } from 'node:child_process';

/**
 * Every process the bench starts, so that all of them are stopped by PID whatever
 * happens: a section that throws, Ctrl-C, or the bench itself failing.
 */
const children = new Map<number, { child: ChildProcess; name: string }>();
const interruptCleanups: (() => Promise<unknown>)[] = [];
let handlersInstalled = false;

/** Work to do on Ctrl-C after the processes are stopped (the finally blocks never run). */
export function onInterrupt(cleanup: () => Promise<unknown>): void {
  interruptCleanups.push(cleanup);
}

export function track(child: ChildProcess, name: string): void {
  if (child.pid === undefined) return;
  const pid = child.pid;
  children.set(pid, { child, name });
  child.once('exit', () => children.delete(pid));
}

export function running(): { pid: number; name: string }[] {
  return [...children].map(([pid, { name }]) => ({ pid, name }));
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** SIGTERM (Relaygram's apps finish in-flight work and write --cpu-prof), SIGKILL after graceMs. */
export async function stopProcess(child: ChildProcess, graceMs = 5_000): Promise<void> {
  if (exited(child)) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => {
    if (!exited(child)) child.kill('SIGKILL');
  }, graceMs);
  await gone;
  clearTimeout(timer);
}

export async function stopAll(graceMs = 5_000): Promise<void> {
  await Promise.all([...children.values()].map(({ child }) => stopProcess(child, graceMs)));
}

/** Last resort when the bench exits without its finally blocks (process.exit, a crash). */
function killAllNow(): void {
  for (const { child } of children.values()) {
    if (!exited(child)) child.kill('SIGKILL');
  }
}

export function installExitHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) {
      killAllNow();
      process.exit(130);
    }
    interrupted = true;
    process.stderr.write(`\nbench: ${signal}, stopping ${children.size} processes\n`);
    void stopAll(3_000)
      .then(() => Promise.allSettled(interruptCleanups.map((cleanup) => cleanup())))
      .finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', killAllNow);
}
