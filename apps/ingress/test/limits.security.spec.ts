import { connect, type Socket } from 'node:net';
import type { RunningApp } from '@relaygram/platform';
import { TelegramEmulator } from '@relaygram/testing';
import { request } from 'undici';
import { bootIngress, captureLogs, uniquePrefix, writeConfig } from './admin-kit';

const SECRET = 'limits-secret-0123456789';

/** Writes a raw request and resolves with the status line (or '' when the socket closed without one). */
function raw(port: number, text: string | Buffer, waitMs = 5_000): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answer.split('\r\n')[0] ?? '');
    };
    const timer = setTimeout(done, waitMs);
    socket.on('connect', () => socket.write(text));
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1');
      if (answer.includes('\r\n\r\n')) done();
    });
    socket.on('error', done);
    socket.on('close', done);
  });
}

/**
 * The public port under abuse: headers past Node's limit answer 431, bodies past 1 MiB
 * answer 413 (declared or streamed), and clients that trickle their bodies do not stop
 * the server from answering everyone else.
 */
describe('ingress: oversized and slow requests', () => {
  let emulator: TelegramEmulator;
  let app: RunningApp;
  let config: { path: string; cleanup(): void };
  const logs = captureLogs();
  let port: number;
  let nextId = 50_000;

  beforeAll(async () => {
    emulator = await TelegramEmulator.start();
    const bot = emulator.addBot();
    config = writeConfig({
      redis: { url: 'redis://127.0.0.1:6379', prefix: uniquePrefix('limits') },
      telegram: { api_base: emulator.apiRoot },
      bots: [
        {
          id: 'shop',
          token_env: 'LIMITS_BOT_TOKEN',
          mode: 'webhook',
          webhook: {
            url: 'https://relay.example/webhooks/telegram/shop',
            secret_token_env: 'LIMITS_SECRET',
            manage: false,
          },
        },
      ],
      routes: [],
      clients: [],
    });
    app = await bootIngress(
      config.path,
      { LIMITS_BOT_TOKEN: bot.token, LIMITS_SECRET: SECRET },
      logs,
    );
    port = Number(new URL(app.url).port);
  });

  afterAll(async () => {
    await app.close();
    await emulator.stop();
    config.cleanup();
  });

  const webhook = async () => {
    const res = await request(`${app.url}/webhooks/telegram/shop`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': SECRET },
      body: JSON.stringify({ update_id: nextId++, message: { chat: { id: 1 }, text: 'x' } }),
    });
    await res.body.dump();
    return res.statusCode;
  };

  it('answers 431 to headers past the limit, and keeps serving', async () => {
    const huge = `POST /webhooks/telegram/shop HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\nContent-Length: 0\r\n\r\n`;
    expect(await raw(port, huge)).toMatch(/^HTTP\/1\.1 431/);
    const many = `GET /healthz HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 3000 }, (_, i) => `X-H${i}: ${'b'.repeat(10)}`).join('\r\n')}\r\n\r\n`;
    expect(await raw(port, many)).toMatch(/^HTTP\/1\.1 431/);
    expect(await webhook()).toBe(202);
  });

  it('answers 413 to a body past 1 MiB, declared or streamed, before storing anything', async () => {
    const big = Buffer.alloc(1024 * 1024 + 1, 'x');
    const declared = await request(`${app.url}/webhooks/telegram/shop`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': SECRET },
      body: big,
    });
    expect(declared.statusCode).toBe(413);
    await declared.body.dump();
    const chunked = await raw(
      port,
      `POST /webhooks/telegram/shop HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
        `X-Telegram-Bot-Api-Secret-Token: ${SECRET}\r\nTransfer-Encoding: chunked\r\n\r\n` +
        `${(2 * 1024 * 1024).toString(16)}\r\n${'y'.repeat(2 * 1024 * 1024)}\r\n0\r\n\r\n`,
    );
    expect(chunked).toMatch(/^HTTP\/1\.1 413/);
    // An unauthenticated sender cannot make it read a megabyte: refused before the body.
    const stranger = await raw(
      port,
      `POST /webhooks/telegram/shop HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${10 * 1024 * 1024}\r\n\r\n{`,
    );
    expect(stranger).toMatch(/^HTTP\/1\.1 401/);
    expect(await webhook()).toBe(202);
  });

  it('refuses an ambiguous message length (Content-Length and chunked, two lengths)', async () => {
    for (const head of [
      'Content-Length: 5\r\nTransfer-Encoding: chunked',
      'Content-Length: 5\r\nContent-Length: 6',
    ]) {
      const status = await raw(
        port,
        `POST /webhooks/telegram/shop HTTP/1.1\r\nHost: x\r\n${head}\r\nX-Telegram-Bot-Api-Secret-Token: ${SECRET}\r\n\r\n0\r\n\r\n`,
      );
      expect(status).toMatch(/^HTTP\/1\.1 400/);
    }
    expect(await webhook()).toBe(202);
  });

  it('keeps serving others while clients trickle their bodies', async () => {
    const slow: Socket[] = [];
    const timers: NodeJS.Timeout[] = [];
    try {
      for (let i = 0; i < 40; i++) {
        const socket = connect(port, '127.0.0.1');
        socket.on('error', () => undefined);
        socket.write(
          `POST /webhooks/telegram/shop HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
            `X-Telegram-Bot-Api-Secret-Token: ${SECRET}\r\nContent-Length: 100000\r\n\r\n{"update_id":`,
        );
        timers.push(setInterval(() => socket.write('1'), 200));
        slow.push(socket);
      }
      for (let i = 0; i < 20; i++) expect(await webhook()).toBe(202);
      const health = await request(`${app.url}/healthz`);
      expect(health.statusCode).toBe(200);
      await health.body.dump();
    } finally {
      for (const timer of timers) clearInterval(timer);
      for (const socket of slow) socket.destroy();
    }
  });
});
