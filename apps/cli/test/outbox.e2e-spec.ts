import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { outboxSendView, type OutboxSend } from '@relaygram/queue';
import { createQueueFixture, type QueueFixture } from '@relaygram/queue/testing';
import { redisUrl, runRelaygramCliSync, uniquePrefix, type CliRun } from '@relaygram/testing';

/**
 * Issue 16: `relaygram outbox show` reads the records the gateway and the dispatcher
 * write, made here through the queue's own OutboxStore as they make them.
 */
describe('relaygram outbox show', () => {
  const dir = mkdtempSync(join(tmpdir(), 'relaygram-cli-outbox-'));
  const configPath = join(dir, 'relaygram.yaml');
  const prefix = uniquePrefix('cli-outbox');
  const token = () => `${randomInt(100_000, 9_999_999)}:${randomBytes(27).toString('base64url')}`;
  const env = { SOL_TOKEN: token(), LUNA_TOKEN: token(), REDIS_URL: redisUrl() };
  const createdAt = Date.now() - 60_000;
  const iso = (ms: number) => new Date(ms).toISOString();
  const ids = { sent: randomUUID(), failed: randomUUID(), queued: randomUUID() };
  // Long enough to be cut at 100 columns; the escape sequence must print escaped.
  const text = `Your order has shipped \u001b[31m ${'and is on its way '.repeat(8)}`;
  const result = JSON.stringify({ message_id: 5, chat: { id: -100999 }, text });
  let fixture: QueueFixture;

  const relaygram = (args: string[]): CliRun =>
    runRelaygramCliSync(['outbox', 'show', ...args, '--config', configPath], env);

  function send(bot: string, id: string, chatId: number | string): OutboxSend {
    const call = { method: 'sendMessage', params: { chat_id: chatId, text: 'hi' } };
    return { bot, client: 'site', id, call, chatId, createdAt };
  }

  beforeAll(async () => {
    writeFileSync(
      configPath,
      `redis:
  url: redis://127.0.0.1:1
  prefix: ${prefix}
bots:
  - { id: sol, token_env: SOL_TOKEN, mode: polling }
  - { id: luna, token_env: LUNA_TOKEN, mode: polling }
routes:
  - { name: shop, target_url: "http://127.0.0.1:9/shop" }
`,
    );
    fixture = await createQueueFixture('cli-outbox', prefix);
    const { outbox } = fixture;
    // Sent on the second attempt, after the group became a supergroup.
    await outbox.enqueue(send('sol', ids.sent, -100123));
    await outbox.settle(
      'sol',
      ids.sent,
      { status: 'sent', attempts: 2, result, migratedTo: '-100999' },
      createdAt + 5_000,
    );
    await outbox.enqueue(send('sol', ids.failed, 42));
    await outbox.settle(
      'sol',
      ids.failed,
      {
        status: 'failed',
        attempts: 1,
        errorCode: 403,
        description: 'Forbidden: bot was blocked by the user',
      },
      createdAt + 1_000,
    );
    await outbox.enqueue(send('luna', ids.queued, '@shop_news'));
    await outbox.settle(
      'luna',
      ids.queued,
      {
        status: 'queued',
        attempts: 1,
        lastError: '429 Too Many Requests: retry after 3',
        nextAttemptAt: createdAt + 8_000,
      },
      createdAt + 5_000,
    );
  });

  afterAll(async () => {
    await fixture.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it("shows a sent send with Telegram's result on one line, cut to the width", () => {
    const run = relaygram([ids.sent, '--bot', 'sol']);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines.filter((line) => !line.startsWith('result '))).toEqual([
      `id            ${ids.sent}`,
      'bot           sol',
      'client        site',
      'method        sendMessage',
      'chat          -100123',
      'status        sent',
      'attempts      2',
      `created       ${iso(createdAt)}`,
      `updated       ${iso(createdAt + 5_000)}`,
      'migrated to   -100999',
    ]);
    const line = lines.find((l) => l.startsWith('result '));
    expect(line).toMatch(
      /^result {8}\{"message_id":5,"chat":\{"id":-100999\},"text":"Your order has shipped \\u001b\[31m and.*…$/,
    );
    expect(line).toHaveLength(100);
    expect(run.stdout).not.toContain('\u001b');
  });

  it('shows a failed send with its error, and a retried one with its last error and next attempt', () => {
    const failed = relaygram([ids.failed]);
    expect(failed.status).toBe(0);
    expect(failed.stdout).toContain('bot           sol\n');
    expect(failed.stdout).toContain('status        failed\n');
    expect(failed.stdout).toContain('error         403 Forbidden: bot was blocked by the user\n');
    expect(failed.stdout).not.toContain('result');

    // Without --bot the id is looked up in every bot: this one is luna's.
    const queued = relaygram([ids.queued]);
    expect(queued.stderr).toBe('');
    expect(queued.status).toBe(0);
    expect(queued.stdout).toBe(
      [
        `id            ${ids.queued}`,
        'bot           luna',
        'client        site',
        'method        sendMessage',
        'chat          @shop_news',
        'status        queued',
        'attempts      1',
        `created       ${iso(createdAt)}`,
        `updated       ${iso(createdAt + 5_000)}`,
        'last error    429 Too Many Requests: retry after 3',
        `next attempt  ${iso(createdAt + 8_000)}`,
        '',
      ].join('\n'),
    );
  });

  it('prints with --json exactly what the gateway answers, and no token', async () => {
    for (const [bot, id] of [
      ['sol', ids.sent],
      ['sol', ids.failed],
      ['luna', ids.queued],
    ]) {
      const run = relaygram([id, '--json']);
      expect(run.status).toBe(0);
      const record = await fixture.outbox.read(bot, id);
      expect(run.stdout).toBe(`${JSON.stringify(outboxSendView(record!), null, 2)}\n`);
      expect(run.stdout).not.toContain(env.SOL_TOKEN);
      expect(run.stdout).not.toContain(env.LUNA_TOKEN);
    }
    const body = JSON.parse(relaygram([ids.sent, '--json', '--bot', 'sol']).stdout) as unknown;
    expect(body).toMatchObject({ status: 'sent', result: JSON.parse(result) as unknown });
  });

  it('exits 1 for an id in no bot, an id of another bot, or an unknown --bot', () => {
    const missing = randomUUID();
    const none = relaygram([missing]);
    expect(none.status).toBe(1);
    expect(none.stdout).toBe('');
    expect(none.stderr).toBe(
      `relaygram outbox show: no outbox send ${missing} (outbox sends are kept 7 days)\n`,
    );
    const elsewhere = relaygram([ids.queued, '--bot', 'sol']);
    expect(elsewhere.status).toBe(1);
    expect(elsewhere.stderr).toBe(
      `relaygram outbox show: no outbox send ${ids.queued} (outbox sends are kept 7 days)\n`,
    );
    const unknown = relaygram([ids.sent, '--bot', 'moon']);
    expect(unknown.status).toBe(1);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toBe(
      'relaygram outbox show: unknown bot "moon" (the config has: sol, luna)\n',
    );
  });
});
