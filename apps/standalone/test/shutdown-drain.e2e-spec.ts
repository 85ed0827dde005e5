import { startApp } from '@relaygram/platform';
import { captureLogs, testAppEnv, writeTestConfig } from '@relaygram/testing';
import { connect } from 'node:net';
import { StandaloneAppModule } from '../src/app.module';

const SECRET = 'drain-test-secret-0123456789';

describe('shutdown with a request still open', () => {
  it('cuts its connection off after the drain time, says so, and closes the app', async () => {
    const config = writeTestConfig(
      [
        'bots:',
        '  - id: shop',
        '    token_env: DRAIN_BOT_TOKEN',
        '    mode: webhook',
        '    webhook:',
        '      url: https://relay.example/webhooks/telegram/shop',
        '      secret_token_env: DRAIN_WEBHOOK_SECRET',
        '      manage: false',
        '',
      ].join('\n'),
    );
    const logs = captureLogs();
    const running = await startApp(
      { service: 'standalone', module: (boot) => StandaloneAppModule.forRoot(boot) },
      {
        env: testAppEnv(config.path, {
          DRAIN_BOT_TOKEN: '123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw',
          DRAIN_WEBHOOK_SECRET: SECRET,
          TELEGRAM_API_BASE: 'http://127.0.0.1:9',
        }),
        signals: false,
        logDestination: logs.stream,
        httpDrainMs: 300,
      },
    );
    try {
      // A webhook call whose body never arrives: only the drain time can end it.
      const socket = connect(Number(new URL(running.url).port), '127.0.0.1');
      socket.on('error', () => undefined);
      const socketClosed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      socket.write(
        'POST /webhooks/telegram/shop HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
          `X-Telegram-Bot-Api-Secret-Token: ${SECRET}\r\nContent-Length: 1000\r\n\r\n{"update_id":`,
      );
      await new Promise((resolve) => setTimeout(resolve, 100));

      await running.close();
      await socketClosed;

      const cutOff = logs.lines.filter((line) => line.includes('shutdown:'));
      expect(cutOff).toHaveLength(1);
      expect(cutOff[0]).toMatch(/1 connection\(s\) still open after 300 ms, cut off/);
    } finally {
      await running.close();
      config.remove();
    }
  });
});
