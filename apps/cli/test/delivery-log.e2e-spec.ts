import { randomBytes, randomInt } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeadReason, laneId } from '@relaygram/contracts';
import { newDeliveryId, type AttemptRecord } from '@relaygram/queue';
import {
  createQueueFixture,
  type DrainJobDriver,
  type QueueFixture,
} from '@relaygram/queue/testing';
import { redisUrl, runRelaygramCliSync, uniquePrefix, type CliRun } from '@relaygram/testing';

/**
 * Issue 19, item 2: `relaygram trace` and `relaygram attempts` read what the lanes'
 * scripts recorded: the updates are enqueued and their attempts finished through the
 * queue's own UpdateEnqueuer and LaneStore, as a dispatcher would.
 */
describe('relaygram trace and attempts', () => {
  const dir = mkdtempSync(join(tmpdir(), 'relaygram-cli-dlog-'));
  const configPath = join(dir, 'relaygram.yaml');
  const prefix = uniquePrefix('cli-dlog');
  const env = {
    BOT_TOKEN: `${randomInt(100_000, 9_999_999)}:${randomBytes(27).toString('base64url')}`,
    REDIS_URL: redisUrl(),
    DESK_TOKEN: randomBytes(24).toString('base64url'),
  };
  const ROUTES = ['shop', 'site', 'hook'] as const;
  let store: QueueFixture;
  let driver: DrainJobDriver;
  const ids: Record<string, string> = {};
  const retryAt = Date.now() + 3_600_000;

  const relaygram = (args: string[]): CliRun =>
    runRelaygramCliSync([...args, '--config', configPath], env);

  const record = (status: number, body: string, durationMs = 12): AttemptRecord => ({
    status,
    error: null,
    durationMs,
    body: Buffer.from(body),
  });

  async function enqueue(updateId: number, routes: readonly string[]): Promise<void> {
    const deliveries = routes.map((route) => {
      const deliveryId = newDeliveryId();
      ids[`${updateId}:${route}`] = deliveryId;
      return { route, lane: laneId(route, 'sol', { kind: 'shared' }), deliveryId };
    });
    const body = Buffer.from(JSON.stringify({ update_id: updateId, message: { chat: { id: 1 } } }));
    const enqueued = await store.enqueuer.enqueue({ bot: 'sol', updateId, body, deliveries });
    await enqueued.jobsAdded;
  }

  beforeAll(async () => {
    writeFileSync(
      configPath,
      `redis:
  url: redis://127.0.0.1:1
  prefix: ${prefix}
bots:
  - { id: sol, token_env: BOT_TOKEN, mode: polling }
routes:
${ROUTES.map((name) => `  - { name: ${name}, target_url: "http://127.0.0.1:9/${name}" }`).join('\n')}
  - { name: inbox, pull: { client: desk } }
clients:
  - { name: desk, token_env: DESK_TOKEN, bots: [sol] }
`,
    );
    store = await createQueueFixture('cli-dlog', prefix);
    driver = store.driver;
    // Update 42 goes to three routes: delivered, retrying after a 503, dead on a 400.
    await enqueue(42, ROUTES);
    await driver.finishOne('shop', () => ({
      kind: 'delivered',
      record: record(200, 'ok\nthanks \u001b[31m', 15),
    }));
    await driver.finishOne('site', () => ({
      kind: 'retry',
      retry: { consecutive5xx: 1, lastStatus: 503, lastError: '503', nextAttemptAt: retryAt },
      record: record(503, 'busy'),
    }));
    await driver.finishOne('hook', () => ({
      kind: 'dead',
      dead: { reason: DeadReason.Rejected, attempts: 1, lastStatus: 400, lastBody: 'bad chat' },
      record: record(400, '{"error":"bad chat"}', 8),
    }));
    // Telegram hands 42 over again: dropped as a duplicate. No route matches 50.
    const again = await store.enqueuer.enqueue({
      bot: 'sol',
      updateId: 42,
      body: Buffer.from('{"update_id":42}'),
      deliveries: [],
    });
    expect(again.status).toBe('duplicate');
    await enqueue(50, []);
    // Three more updates delivered to shop, for its list's pages.
    for (const updateId of [43, 44, 45]) {
      await enqueue(updateId, ['shop']);
      await driver.finishOne('shop', () => ({ kind: 'delivered', record: record(204, '') }));
    }
  });

  afterAll(async () => {
    await store.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it("traces an update: each route's delivery, its state and every attempt with its answer", () => {
    const run = relaygram(['trace', 'sol', '42']);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const lines = run.stdout.split('\n');
    expect(lines[0]).toMatch(/^update 42 of bot sol: queued at \S+Z for 3 routes$/);
    expect(lines[1]).toMatch(/^ {2}received again at \S+Z, dropped as a duplicate$/);
    const after = (heading: RegExp) => lines[lines.findIndex((l) => heading.test(l)) + 1];
    expect(lines).toContain(`shop: delivered (delivery ${ids['42:shop']})`);
    expect(after(/^shop: delivered/)).toMatch(
      /^ {2}#1 {2}\S+Z {2}delivered {2}200 {2}15 ms {2}"ok\\nthanks \\u001b\[31m"$/,
    );
    expect(lines).toContain(
      `site: retrying, next attempt at ${new Date(retryAt).toISOString()} (delivery ${ids['42:site']})`,
    );
    expect(after(/^site: retrying/)).toMatch(/#1 {2}\S+Z {2}retry {2}503 {2}12 ms {2}"busy"$/);
    expect(lines).toContain(`hook: dead (delivery ${ids['42:hook']})`);
    expect(after(/^hook: dead/)).toMatch(
      /dead {2}400 {2}8 ms {2}"\{\\"error\\":\\"bad chat\\"\}"$/,
    );
  });

  it('prints the trace as the admin API answers it with --json', () => {
    const run = relaygram(['trace', 'sol', '42', '--json']);
    expect(run.status).toBe(0);
    const body = JSON.parse(run.stdout) as {
      deliveries: { route: string; attempts: Record<string, unknown>[] }[];
    } & Record<string, unknown>;
    expect(body).toMatchObject({ bot: 'sol', update_id: 42, status: 'queued' });
    const received = Date.parse(body.received_at as string);
    const [duplicate] = body.duplicates_at as string[];
    expect(Date.parse(duplicate)).toBeGreaterThanOrEqual(received);
    const byRoute = Object.fromEntries(body.deliveries.map((d) => [d.route, d]));
    expect(byRoute.shop).toMatchObject({ state: 'delivered', delivery_id: ids['42:shop'] });
    expect(byRoute.shop.attempts).toEqual([
      expect.objectContaining({
        attempt: 1,
        outcome: 'delivered',
        status: 200,
        error: null,
        duration_ms: 15,
        body: 'ok\nthanks \u001b[31m',
        update_id: 42,
        route: 'shop',
      }),
    ]);
    expect(byRoute.site).toMatchObject({
      state: 'retrying',
      next_attempt_at: new Date(retryAt).toISOString(),
    });
    expect(byRoute.site.attempts[0]).toMatchObject({ outcome: 'retry', status: 503, body: 'busy' });
    expect(byRoute.hook).toMatchObject({ state: 'dead' });
    expect(byRoute.hook.attempts[0]).toMatchObject({ outcome: 'dead', status: 400 });
  });

  it('traces an update no route matched as ignored', () => {
    const run = relaygram(['trace', 'sol', '50']);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^update 50 of bot sol: ignored at \S+Z, no route matched it\n$/);
    const json = JSON.parse(relaygram(['trace', 'sol', '50', '--json']).stdout) as unknown;
    expect(json).toMatchObject({ update_id: 50, status: 'ignored', deliveries: [] });
  });

  it('says so, exit code 1, for an update not in the log, an unknown bot or a bad update_id', () => {
    const missing = relaygram(['trace', 'sol', '999']);
    expect(missing.status).toBe(1);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toBe(
      'relaygram trace: update 999 of bot sol is not in the delivery log: it keeps updates for 1d (delivery_log.max_age) and at most 10000 per bot (delivery_log.updates_per_bot)\n',
    );
    const unknown = relaygram(['trace', 'moon', '42']);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toBe('relaygram trace: unknown bot "moon" (the config has: sol)\n');
    const bad = relaygram(['trace', 'sol', 'forty-two']);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/update_id.*not an update_id \(a whole number\)/);
  });

  it("lists a route's attempts newest first, in pages", () => {
    const all = relaygram(['attempts', 'shop']);
    expect(all.status).toBe(0);
    const lines = all.stdout.trim().split('\n');
    expect(lines[0]).toMatch(
      /^AT\s+BOT\s+UPDATE\s+ATTEMPT\s+OUTCOME\s+STATUS\s+DURATION\s+ANSWER$/,
    );
    expect(lines.slice(1).map((line) => line.split(/\s+/)[2])).toEqual(['45', '44', '43', '42']);
    expect(lines[1]).toMatch(/sol\s+45\s+#1\s+delivered\s+204\s+12 ms\s+-$/);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(100);

    const first = relaygram(['attempts', 'shop', '--limit', '3']);
    const cursor = /more: add --cursor (\S+)/.exec(first.stdout)?.[1];
    expect(cursor).toBeDefined();
    const second = relaygram(['attempts', 'shop', '--limit', '3', '--cursor', cursor!]);
    expect(second.status).toBe(0);
    expect(second.stdout).toMatch(/sol\s+42\s+#1\s+delivered\s+200/);
    expect(second.stdout).not.toContain('more:');
  });

  it('filters by --failed, --status and --since, and prints { route, items, next_cursor } with --json', () => {
    const failed = relaygram(['attempts', 'site', '--failed', '--json']);
    expect(failed.status).toBe(0);
    const body = JSON.parse(failed.stdout) as { items: Record<string, unknown>[] };
    expect(body).toMatchObject({ route: 'site', next_cursor: null });
    expect(body.items).toEqual([
      expect.objectContaining({
        delivery_id: ids['42:site'],
        update_id: 42,
        bot: 'sol',
        outcome: 'retry',
        status: 503,
        body: 'busy',
        next_attempt_at: new Date(retryAt).toISOString(),
      }),
    ]);
    expect(relaygram(['attempts', 'shop', '--failed']).stdout).toBe(
      'no attempts of shop in the delivery log match\n',
    );
    expect(relaygram(['attempts', 'hook', '--status', '4xx']).stdout).toMatch(/dead\s+400/);
    expect(relaygram(['attempts', 'hook', '--status', '5xx']).stdout).toMatch(/^no attempts/);
    expect(
      relaygram(['attempts', 'shop', '--since', '10m']).stdout.trim().split('\n'),
    ).toHaveLength(5);
    const later = new Date(Date.now() + 60_000).toISOString();
    expect(relaygram(['attempts', 'shop', '--since', later]).stdout).toMatch(/^no attempts/);
    expect(relaygram(['attempts', 'shop', '--until', '1h']).stdout).toMatch(/^no attempts/);
    expect(
      relaygram(['attempts', 'shop', '--until', later]).stdout.trim().split('\n'),
    ).toHaveLength(5);
  });

  it('refuses bad options and unknown routes with a clear message', () => {
    const cases: [string[], RegExp][] = [
      [['attempts', 'nope'], /unknown route "nope" \(the config has: shop, site, hook\)/],
      [
        ['attempts', 'shop', '--status', '6xx'],
        /--status.*Allowed choices are 2xx, 3xx, 4xx, 5xx, error, failed/,
      ],
      [
        ['attempts', 'shop', '--since', 'yesterday'],
        /--since.*age \(30s, 10m, 2h, 1d\) or an ISO time/,
      ],
      [['attempts', 'shop', '--limit', '0'], /--limit.*1 to 200/],
      [['attempts', 'shop', '--failed', '--status', '2xx'], /--failed or --status 2xx, not both/],
      [['attempts', 'shop', '--cursor', 'abc'], /--cursor: not a cursor this command printed/],
    ];
    for (const [args, message] of cases) {
      const run = relaygram(args);
      expect({ args, status: run.status }).toEqual({ args, status: 1 });
      expect(run.stderr).toMatch(message);
    }
  });
});
