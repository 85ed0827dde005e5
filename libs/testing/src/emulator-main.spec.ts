import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { EmulatorControlClient } from './emulator/emulator-control-client';
import type { BotIdentity } from './emulator/emulator.types';
import { resultOf } from './test/bot-api-client';

const ROOT = join(__dirname, '..', '..', '..');
const STARTUP_MS = 20_000;

interface Banner {
  apiRoot: string;
  controlUrl: string;
  bots: BotIdentity[];
}

/** The first stdout line of the child, parsed; fails if it exits or stays silent. */
async function banner(child: ChildProcess): Promise<Banner> {
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), STARTUP_MS);
  try {
    const [line] = (await Promise.race([
      once(lines, 'line'),
      once(child, 'exit').then(([code]) => {
        throw new Error(`emulator exited with ${String(code)}: ${stderr}`);
      }),
    ])) as [string];
    return JSON.parse(line) as Banner;
  } finally {
    clearTimeout(timer);
    lines.close();
  }
}

describe('emulator.main as a separate process', () => {
  let child: ChildProcess | undefined;

  afterEach(() => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  it('prints its URLs and bots, answers getMe and the control API, and stops on SIGTERM', async () => {
    const token = '5555555555:AAHtestTOKENtestTOKENtestTOKENtestTO';
    child = spawn(
      process.execPath,
      [
        '-r',
        '@swc-node/register',
        'libs/testing/src/emulator.main.ts',
        JSON.stringify({ bots: [{ username: 'main_arg_bot' }], webhookRetryDelayMs: 10 }),
      ],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          PORT: '0',
          HOST: '127.0.0.1',
          SWC_NODE_PROJECT: 'tsconfig.base.json',
          EMULATOR_BOTS: JSON.stringify([{ token, username: 'main_env_bot' }]),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const started = await banner(child);
    expect(started.apiRoot).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(started.controlUrl).toBe(`${started.apiRoot}/_emulator`);
    expect(started.bots.map((b) => b.username)).toEqual(['main_env_bot', 'main_arg_bot']);
    expect(started.bots[0]?.token).toBe(token);

    const me = await resultOf<{ id: number; username: string }>(started.apiRoot, token, 'getMe');
    expect(me).toEqual(expect.objectContaining({ id: 5555555555, username: 'main_env_bot' }));

    const control = new EmulatorControlClient(started.controlUrl);
    const update = await control.message('main_arg_bot', { chatId: 1, text: 'over there' });
    const arg = started.bots[1] as BotIdentity;
    expect(await resultOf(started.apiRoot, arg.token, 'getUpdates')).toEqual([update]);

    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
  });

  it('exits with an error for a bad argument', async () => {
    child = spawn(
      process.execPath,
      ['-r', '@swc-node/register', 'libs/testing/src/emulator.main.ts', '{oops'],
      {
        cwd: ROOT,
        env: { ...process.env, PORT: '0', SWC_NODE_PROJECT: 'tsconfig.base.json' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(1);
  });
});
