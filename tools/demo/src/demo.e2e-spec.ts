import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createRedis, processAlive, waitForRedis } from '@relaygram/queue';
import { keysMatching } from '@relaygram/testing';

const REPO = join(__dirname, '..', '..', '..');

interface DemoResult {
  code: number | null;
  output: string;
}

/** `npm run demo`, from source (the test must not depend on a build being current). */
function runDemo(): Promise<DemoResult> {
  const child = spawn(
    process.execPath,
    [
      '-r',
      require.resolve('@swc-node/register'),
      join(REPO, 'tools', 'demo', 'src', 'main.ts'),
      '--from-source',
    ],
    {
      cwd: REPO,
      env: {
        PATH: process.env.PATH ?? '',
        REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
        SWC_NODE_PROJECT: join(REPO, 'tsconfig.base.json'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const chunks: string[] = [];
  child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), 100_000);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output: chunks.join('') });
    }),
  );
}

describe('npm run demo', () => {
  it('shows the round trip, verifies every signature, and stops everything it started', async () => {
    const { code, output } = await runDemo();
    expect({ code, output }).toMatchObject({ code: 0 });

    // Each delivery as it arrived: route, headers, verified signature.
    expect(output).toMatch(
      /← support: POST \/telegram\/updates update \d+: message from user 1001 "\/start"/,
    );
    expect(output).toMatch(
      /← support: POST \/telegram\/updates update \d+: callback_query from user 1001 data "menu:shop"/,
    );
    expect(output).toMatch(
      /← shop: POST \/hooks\/telegram update \d+ \(envelope\): message from user 2002 "\/order 2 t-shirts"/,
    );
    expect(output).toMatch(
      /X-Relaygram-Bot: demo-bot, X-Webhook-Route: support, X-Telegram-Update-Id: \d+, X-Webhook-Attempt: 1, X-Relaygram-Delivery-Id: [0-9a-f-]{36}/,
    );
    expect(output.match(/✓ relaygram-v1 signature verified/g)).toHaveLength(2);
    expect(output.match(/✓ standard-webhooks signature verified/g)).toHaveLength(1);
    expect(output).not.toContain('NOT verified');
    // The reply through the gateway reached Telegram.
    expect(output).toMatch(/← 200, message_id \d+/);
    expect(output).toContain(
      '✓ Telegram received sendMessage for chat 1001: "Welcome, Ada! What would you like to do?"',
    );
    expect(output).toContain('Round trip complete: 3 deliveries, every signature verified.');
    // No secret of the run is printed without --keep.
    expect(output).not.toMatch(/admin token/);

    const pid = Number(/pid (\d+)\)/.exec(output)?.[1]);
    expect(pid).toBeGreaterThan(0);
    expect(processAlive(pid)).toBe(false);

    const prefix = /under "([a-z0-9-]+):"/.exec(output)?.[1];
    expect(prefix).toMatch(/^demo-/);
    const redis = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    try {
      await waitForRedis(redis);
      expect(await keysMatching(redis, `${prefix}:*`)).toEqual([]);
    } finally {
      await redis.quit();
    }
  }, 120_000);
});
