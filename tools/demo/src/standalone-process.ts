import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { stopProcess } from '@relaygram/testing';

export interface StandaloneLaunch {
  repo: string;
  /** Run apps/standalone/src/main.ts through @swc-node/register instead of the build. */
  fromSource: boolean;
  env: Record<string, string>;
  /** Where the child's log lines go (read back on failure). */
  logFile: string;
}

/** The standalone app as its own process, exactly as `npm start` runs it. */
export class StandaloneProcess {
  private constructor(
    private readonly child: ChildProcess,
    readonly logFile: string,
  ) {}

  static start(launch: StandaloneLaunch): StandaloneProcess {
    const built = join(launch.repo, 'apps', 'standalone', 'dist', 'main.js');
    const args = launch.fromSource
      ? [
          '-r',
          require.resolve('@swc-node/register'),
          join(launch.repo, 'apps', 'standalone', 'src', 'main.ts'),
        ]
      : [built];
    if (!launch.fromSource && !existsSync(built)) {
      throw new Error(`${built} is missing: run \`npm run build\` first`);
    }
    const child = spawn(process.execPath, args, {
      cwd: launch.repo,
      env: {
        ...launch.env,
        ...(launch.fromSource ? { SWC_NODE_PROJECT: join(launch.repo, 'tsconfig.base.json') } : {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: a Ctrl-C reaches the demo only, which stops Relaygram
      // before the Redis it needs while closing.
      detached: true,
    });
    const killOnExit = () => child.kill('SIGTERM');
    process.once('exit', killOnExit);
    const log = createWriteStream(launch.logFile);
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    child.once('exit', () => {
      process.off('exit', killOnExit);
      log.end();
    });
    return new StandaloneProcess(child, launch.logFile);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** SIGTERM: in-flight work finishes and the process exits; SIGKILL after `graceMs`. */
  async stop(graceMs = 30_000): Promise<number | null> {
    await stopProcess(this.child, graceMs);
    return this.child.exitCode;
  }

  /** The last lines it wrote, for an error report. */
  tail(lines = 20): string {
    try {
      return readFileSync(this.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  }
}
