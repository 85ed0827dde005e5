import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';

/** The workspace root: this file sits at libs/testing/{src,dist}/. */
const REPO = join(__dirname, '..', '..', '..');
const CLI_MAIN = join(REPO, 'apps', 'cli', 'src', 'main.ts');

export interface CliRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `relaygram ...` from its sources in a child process, asynchronously: whatever it
 * talks to (the emulator, an app) runs in the test's process and must keep answering.
 * The child sees PATH and `env`, nothing else of the test's environment.
 */
export function runRelaygramCli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, cliArgs(args), { cwd: REPO, env: cliEnv(env) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('error', reject);
    child.once('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

/**
 * `runRelaygramCli` blocking the test until the CLI exits, for commands that need nothing
 * of the test's process; `cwd` is where relative config paths resolve.
 */
export function runRelaygramCliSync(
  args: string[],
  env: Record<string, string> = {},
  cwd = REPO,
): CliRun {
  const child = spawnSync(process.execPath, cliArgs(args), {
    cwd,
    encoding: 'utf8',
    timeout: 60_000,
    env: cliEnv(env),
  });
  if (child.error) throw child.error;
  return { status: child.status, stdout: child.stdout, stderr: child.stderr };
}

function cliArgs(args: string[]): string[] {
  return ['-r', require.resolve('@swc-node/register'), CLI_MAIN, ...args];
}

function cliEnv(env: Record<string, string>): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    SWC_NODE_PROJECT: join(REPO, 'tsconfig.base.json'),
    ...env,
  };
}
