import { startApp, type RunningApp } from '@relaygram/platform';
import { discardLogs, testAppEnv, writeTestConfig, type TestConfigFile } from '@relaygram/testing';
import { connect, type Socket } from 'node:net';
import { StandaloneAppModule } from '../src/app.module';

const SECRET = 'slow-client-secret-0123456789';

/** Opens a request that declares a body and sends it a byte at a time, forever. */
function trickle(port: number): { socket: Socket; closed: Promise<string>; stop(): void } {
  const socket = connect(port, '127.0.0.1');
  let answer = '';
  socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(answer)));
  socket.write(
    'POST /webhooks/telegram/shop HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
      `X-Telegram-Bot-Api-Secret-Token: ${SECRET}\r\nContent-Length: 100000\r\n\r\n{"update_id":`,
  );
  const timer = setInterval(() => socket.write('1'), 100);
  return { socket, closed, stop: () => clearInterval(timer) };
}

describe('a client that trickles its body (slowloris)', () => {
  let running: RunningApp;
  let config: TestConfigFile;

  beforeAll(async () => {
    config = writeTestConfig(
      [
        'bots:',
        '  - id: shop',
        '    token_env: SLOW_BOT_TOKEN',
        '    mode: webhook',
        '    webhook:',
        '      url: https://relay.example/webhooks/telegram/shop',
        '      secret_token_env: SLOW_WEBHOOK_SECRET',
        '      manage: false',
        '',
      ].join('\n'),
    );
    running = await startApp(
      { service: 'standalone', module: (boot) => StandaloneAppModule.forRoot(boot) },
      {
        env: testAppEnv(config.path, {
          SLOW_BOT_TOKEN: '123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw',
          SLOW_WEBHOOK_SECRET: SECRET,
          TELEGRAM_API_BASE: 'http://127.0.0.1:9',
        }),
        signals: false,
        logDestination: discardLogs(),
        requestTimeoutMs: 1500,
      },
    );
  });
  afterAll(async () => {
    await running.close();
    config.remove();
  });

  it('applies the request timeout to both listeners', () => {
    expect(running.app.getHttpServer().requestTimeout).toBe(1500);
  });

  it('is cut off with 408 once the request timeout has passed', async () => {
    const client = trickle(Number(new URL(running.url).port));
    try {
      const outcome = await Promise.race([
        client.closed,
        new Promise<string>((resolve) => setTimeout(() => resolve('still open'), 15_000)),
      ]);
      expect(outcome).toMatch(/^HTTP\/1\.1 408/);
    } finally {
      client.stop();
      client.socket.destroy();
    }
  });
});
