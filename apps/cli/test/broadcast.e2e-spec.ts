import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BroadcastStore, broadcastView, type RecipientResult } from '@relaygram/queue';
import { createQueueFixture, type QueueFixture } from '@relaygram/queue/testing';
import { redisUrl, runRelaygramCliSync, uniquePrefix, type CliRun } from '@relaygram/testing';

/**
 * Issue 16: `relaygram broadcast list|show|pause|resume|cancel` reads and steers the
 * broadcasts the gateway creates and the dispatchers send, made here through the
 * queue's own BroadcastStore as they make them.
 */
describe('relaygram broadcast', () => {
  const dir = mkdtempSync(join(tmpdir(), 'relaygram-cli-broadcast-'));
  const configPath = join(dir, 'relaygram.yaml');
  const prefix = uniquePrefix('cli-broadcast');
  const token = () => `${randomInt(100_000, 9_999_999)}:${randomBytes(27).toString('base64url')}`;
  const env = { SOL_TOKEN: token(), LUNA_TOKEN: token(), REDIS_URL: redisUrl() };
  const t = Date.now();
  const iso = (ms: number) => new Date(ms).toISOString();
  const ids = {
    /** sol's, sending: 30 of 100 settled in its first two minutes. */
    running: randomUUID(),
    /** sol's, every recipient settled. */
    done: randomUUID(),
    /** sol's, paused, resumed and cancelled by the tests. */
    steered: randomUUID(),
    /** luna's, started, nothing settled yet. */
    fresh: randomUUID(),
    /** luna's, recipients still arriving: not listed, but found. */
    loading: randomUUID(),
  };
  const created = {
    running: t - 3 * 3600_000,
    done: t - 2 * 3600_000,
    steered: t - 3600_000,
    fresh: t - 1800_000,
    loading: t - 60_000,
  };
  const call = { method: 'sendMessage', params: { text: 'Spring sale: 20% off' } };
  let fixture: QueueFixture;
  let store: BroadcastStore;

  const relaygram = (args: string[]): CliRun =>
    runRelaygramCliSync(['broadcast', ...args, '--config', configPath], env);

  /** A started broadcast of `count` recipients, chat ids 1000 and up. */
  async function started(bot: string, id: keyof typeof ids, count: number, startAt: number) {
    await store.create({ bot, client: 'shop', id: ids[id], upload: 'u', createdAt: created[id] });
    const chats = Array.from({ length: count }, (_, i) => String(1000 + i));
    await store.append(bot, ids[id], 'u', chats);
    await store.start(bot, ids[id], 'u', call, startAt);
  }

  /** Claims `outcomes.length` recipients at `at` and settles them as given 5 s later. */
  async function settle(bot: string, id: string, outcomes: string[], at: number) {
    const claim = await store.claim(bot, id, outcomes.length, at);
    if (claim.status !== 'running') throw new Error(`claim found ${claim.status}`);
    const results = claim.recipients.map((r, i): RecipientResult => {
      const outcome = outcomes[i];
      if (outcome === 'sent') return { index: r.index, outcome };
      return outcome === 'blocked'
        ? {
            index: r.index,
            outcome,
            chatId: r.chatId,
            errorCode: 403,
            description: 'Forbidden: bot was blocked by the user',
          }
        : {
            index: r.index,
            outcome: 'failed',
            chatId: r.chatId,
            errorCode: 400,
            description: 'Bad Request: chat not found',
          };
    });
    await store.settle(bot, id, results, at + 5_000);
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
    fixture = await createQueueFixture('cli-broadcast', prefix);
    store = new BroadcastStore(fixture.ctx);
    const repeat = (outcome: string, n: number) => Array<string>(n).fill(outcome);
    await started('sol', 'running', 100, t - 120_000);
    await settle(
      'sol',
      ids.running,
      [...repeat('sent', 20), ...repeat('blocked', 6), ...repeat('failed', 4)],
      t - 100_000,
    );
    await started('sol', 'done', 3, created.done + 1_000);
    await settle('sol', ids.done, ['sent', 'blocked', 'sent'], created.done + 2_000);
    await started('sol', 'steered', 5, created.steered + 1_000);
    await started('luna', 'fresh', 10, created.fresh + 1_000);
    await store.create({
      bot: 'luna',
      client: 'shop',
      id: ids.loading,
      upload: 'u',
      createdAt: created.loading,
    });
    await store.append('luna', ids.loading, 'u', ['1', '2']);
  });

  afterAll(async () => {
    await fixture.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists the broadcasts of every bot newest first, or of one bot, up to --limit', async () => {
    expect((await store.read('sol', ids.done))?.status).toBe('done');
    const run = relaygram(['list']);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines.map((line) => line.split(/ {2,}/))).toEqual([
      ['ID', 'BOT', 'STATUS', 'PROGRESS', 'SENT', 'BLOCKED', 'FAILED', 'CREATED'],
      [ids.fresh, 'luna', 'running', '0/10 0%', '0', '0', '0', iso(created.fresh)],
      [ids.steered, 'sol', 'running', '0/5 0%', '0', '0', '0', iso(created.steered)],
      [ids.done, 'sol', 'done', '3/3 100%', '2', '1', '0', iso(created.done)],
      [ids.running, 'sol', 'running', '30/100 30%', '20', '6', '4', iso(created.running)],
    ]);
    // Columns line up under their headings.
    const column = lines[0].indexOf('CREATED');
    expect(lines.slice(1).map((line) => line.lastIndexOf(' ') + 1)).toEqual([
      column,
      column,
      column,
      column,
    ]);

    const sol = relaygram(['list', '--bot', 'sol', '--limit', '2']);
    expect(sol.status).toBe(0);
    expect(
      sol.stdout
        .trimEnd()
        .split('\n')
        .slice(1)
        .map((line) => line.split(' ')[0]),
    ).toEqual([ids.steered, ids.done]);

    const json = relaygram(['list', '--bot', 'sol', '--json']);
    expect(json.status).toBe(0);
    const body = JSON.parse(json.stdout) as { items: Record<string, unknown>[] };
    expect(body.items.map((item) => [item.bot, item.id, item.status])).toEqual([
      ['sol', ids.steered, 'running'],
      ['sol', ids.done, 'done'],
      ['sol', ids.running, 'running'],
    ]);
    const done = await store.read('sol', ids.done);
    expect(body.items[1]).toEqual({ bot: 'sol', ...broadcastView(done!) });
  });

  it('lists nothing for a bot without broadcasts, and refuses a bad --limit or --bot', () => {
    writeFileSync(
      join(dir, 'empty.yaml'),
      `redis: { url: "redis://127.0.0.1:1", prefix: "${prefix}-none" }
bots:
  - { id: sol, token_env: SOL_TOKEN, mode: polling }
`,
    );
    const empty = runRelaygramCliSync(
      ['broadcast', 'list', '--config', join(dir, 'empty.yaml')],
      env,
    );
    expect(empty.status).toBe(0);
    expect(empty.stdout).toBe('no broadcasts\n');

    const limit = relaygram(['list', '--limit', '0']);
    expect(limit.status).toBe(1);
    expect(limit.stderr).toContain('must be a whole number from 1 to 500');
    const bot = relaygram(['list', '--bot', 'moon']);
    expect(bot.status).toBe(1);
    expect(bot.stderr).toBe(
      'relaygram broadcast list: unknown bot "moon" (the config has: sol, luna)\n',
    );
  });

  it('shows a finished broadcast: totals, times and its rate', async () => {
    const run = relaygram(['show', ids.done]);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(
      [
        `id        ${ids.done}`,
        'bot       sol',
        'client    shop',
        'method    sendMessage',
        'status    done',
        'progress  3/3 100%',
        'sent      2',
        'blocked   1',
        'failed    0',
        'pending   0',
        `created   ${iso(created.done)}`,
        `started   ${iso(created.done + 1_000)}`,
        `finished  ${iso(created.done + 7_000)}`,
        // 3 recipients in the 6 s it ran.
        'rate      0.5/s',
        '',
      ].join('\n'),
    );
    const json = relaygram(['show', ids.done, '--bot', 'sol', '--json']);
    expect(json.status).toBe(0);
    const record = await store.read('sol', ids.done);
    expect(json.stdout).toBe(`${JSON.stringify(broadcastView(record!), null, 2)}\n`);
    expect(json.stdout).not.toContain(env.SOL_TOKEN);
  });

  it('shows a running broadcast with its rate and estimated finish', () => {
    const before = Date.now();
    const run = relaygram(['show', ids.running]);
    const after = Date.now();
    expect(run.status).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines).toContain('progress  30/100 30%');
    expect(lines).toContain('pending   70');
    expect(lines.some((line) => line.startsWith('finished'))).toBe(false);
    // 30 recipients in the two minutes and some it has run: the other 70 take 7/3 of that.
    // A whole number of minutes prints without its seconds (`in 5m`).
    const match = /^rate {6}0\.2\/s, estimated finish (\S+) \(in \dm( \d+s)?\)$/.exec(
      lines.at(-1)!,
    );
    expect(match).not.toBeNull();
    const finish = Date.parse(match![1]);
    const startedAt = t - 120_000;
    expect(finish).toBeGreaterThanOrEqual(before + ((before - startedAt) * 7) / 3 - 1_000);
    expect(finish).toBeLessThanOrEqual(after + ((after - startedAt) * 7) / 3 + 1_000);

    const json = JSON.parse(relaygram(['show', ids.running, '--json']).stdout) as Record<
      string,
      unknown
    >;
    expect(json).toMatchObject({
      id: ids.running,
      status: 'running',
      method: 'sendMessage',
      total: 100,
      sent: 20,
      blocked: 6,
      failed: 4,
      pending: 70,
      created_at: iso(created.running),
      started_at: iso(t - 120_000),
    });
    expect(json.rate).toBeCloseTo(0.2, 1);
    expect(typeof json.estimated_finish_at).toBe('string');

    // Without --bot the id is looked up in every bot: these are luna's.
    const fresh = relaygram(['show', ids.fresh]);
    expect(fresh.stdout).toContain('bot       luna\n');
    expect(fresh.stdout).toContain('rate      0/s, no estimate before the first sends settle\n');
    const loading = relaygram(['show', ids.loading]);
    expect(loading.status).toBe(0);
    expect(loading.stdout).toContain('status    loading\n');
    expect(loading.stdout).toContain('method    -\n');
    expect(loading.stdout).toContain('progress  0/2 0%\n');
  });

  it('pauses, resumes and cancels a broadcast, printing its new status', async () => {
    const pause = relaygram(['pause', ids.steered]);
    expect(pause.stderr).toBe('');
    expect(pause.status).toBe(0);
    expect(pause.stdout).toBe(`broadcast ${ids.steered} of sol: paused\n`);
    expect((await store.read('sol', ids.steered))?.status).toBe('paused');
    const operators = relaygram(['show', ids.steered]).stdout;
    expect(operators).toContain('rate      0/s, no estimate while paused\n');
    // An operator's pause says no why.
    expect(operators).not.toMatch(/^why /m);

    const resume = relaygram(['resume', ids.steered, '--bot', 'sol']);
    expect(resume.status).toBe(0);
    expect(resume.stdout).toBe(`broadcast ${ids.steered} of sol: running\n`);
    expect(await store.running()).toContainEqual({ bot: 'sol', id: ids.steered });

    // A dispatcher's pause (Telegram refused the token) says why, under the status.
    const why = "Telegram refused the bot's token (401 Unauthorized): fix it, then resume.";
    expect(await store.control('sol', ids.steered, 'pause', Date.now(), why)).toMatchObject({
      ok: true,
    });
    const halted = relaygram(['show', ids.steered]).stdout.split('\n');
    expect(halted.slice(4, 6)).toEqual(['status    paused', `why       ${why}`]);
    expect(relaygram(['resume', ids.steered]).status).toBe(0);
    expect(relaygram(['show', ids.steered]).stdout).not.toMatch(/^why /m);

    const cancel = relaygram(['cancel', ids.steered]);
    expect(cancel.status).toBe(0);
    expect(cancel.stdout).toBe(`broadcast ${ids.steered} of sol: cancelled\n`);
    const record = await store.read('sol', ids.steered);
    expect(record?.status).toBe('cancelled');
    expect(record?.finishedAt).toBeDefined();
  });

  it('refuses a transition the status does not allow, naming the status', async () => {
    const cases: [string[], string][] = [
      [
        ['pause', ids.done],
        'relaygram broadcast pause: the broadcast is done: it cannot be paused',
      ],
      [
        ['resume', ids.running],
        'relaygram broadcast resume: the broadcast is running: it cannot be resumed',
      ],
      [
        ['resume', ids.steered],
        'relaygram broadcast resume: the broadcast is cancelled: it cannot be resumed',
      ],
      [
        ['cancel', ids.done],
        'relaygram broadcast cancel: the broadcast is done: it cannot be cancelled',
      ],
      [
        ['cancel', ids.loading],
        'relaygram broadcast cancel: the broadcast is loading: it cannot be cancelled',
      ],
    ];
    for (const [args, message] of cases) {
      const run = relaygram(args);
      expect({ args, status: run.status, stdout: run.stdout, stderr: run.stderr }).toEqual({
        args,
        status: 1,
        stdout: '',
        stderr: `${message}\n`,
      });
    }
    expect((await store.read('sol', ids.done))?.status).toBe('done');
    expect((await store.read('sol', ids.running))?.status).toBe('running');
  });

  it('exits 1 for an id in no bot, an id of another bot, or an unknown --bot', () => {
    const missing = randomUUID();
    const notFound = (command: string, id: string) =>
      `relaygram broadcast ${command}: no broadcast ${id} (broadcasts are kept 7 days after they end)\n`;
    for (const command of ['show', 'pause', 'resume', 'cancel']) {
      const run = relaygram([command, missing]);
      expect(run.status).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe(notFound(command, missing));
    }
    const elsewhere = relaygram(['pause', ids.fresh, '--bot', 'sol']);
    expect(elsewhere.status).toBe(1);
    expect(elsewhere.stderr).toBe(notFound('pause', ids.fresh));
    const unknown = relaygram(['show', ids.done, '--bot', 'moon']);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toBe(
      'relaygram broadcast show: unknown bot "moon" (the config has: sol, luna)\n',
    );
  });
});
