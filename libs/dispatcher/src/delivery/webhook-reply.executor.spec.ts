import { randomUUID } from 'node:crypto';
import {
  DEFAULT_OUTBOUND,
  Secret,
  type BotConfig,
  type OutboundConfig,
  type RelaygramConfig,
} from '@relaygram/config';
import { RelaygramMetrics } from '@relaygram/observability';
import { OutboundPacer } from '@relaygram/pacing';
import { TelegramEmulator, type BotIdentity } from '@relaygram/testing';
import pino from 'pino';
import { WebhookReplyExecutor, type ReplySource } from './webhook-reply.executor';

function redisUrl(): string {
  const url = process.env.REDIS_URL;
  if (!url) throw new Error('REDIS_URL is not set: run the tests through jest');
  return url;
}

/**
 * Webhook replies go out through the same budgets as the gateway's calls: on a real
 * Redis and the emulator enforcing the same limits.
 */
describe('WebhookReplyExecutor pacing', () => {
  let emulator: TelegramEmulator;
  let identity: BotIdentity;
  let prefix: string;
  const executors: WebhookReplyExecutor[] = [];
  const pacers: OutboundPacer[] = [];

  function config(outbound: Partial<OutboundConfig>): RelaygramConfig {
    const bot: BotConfig = {
      id: 'reply-bot',
      tokenEnv: 'REPLY_BOT_TOKEN',
      token: new Secret(identity.token),
      numericId: String(identity.id),
      mode: 'polling',
      allowedUpdates: ['message'],
      default: true,
      outbound: { ...DEFAULT_OUTBOUND, ...outbound },
    };
    return {
      redis: { url: redisUrl(), prefix, waitReplicas: 0, waitTimeoutMs: 500 },
      telegram: { apiBase: emulator.apiRoot },
      bots: [bot],
      routes: [],
      clients: [],
      warnings: [],
      source: 'test',
    };
  }

  function executor(cfg: RelaygramConfig, metrics: RelaygramMetrics, pacer?: OutboundPacer) {
    const made = new WebhookReplyExecutor(
      { config: cfg },
      metrics,
      pino({ level: 'silent' }),
      pacer,
    );
    executors.push(made);
    return made;
  }

  const source = (n: number): ReplySource => ({
    route: 'site',
    bot: 'reply-bot',
    updateId: n,
    deliveryId: `d-${n}`,
  });
  const reply = (chat: number, text: string) =>
    Buffer.from(JSON.stringify({ method: 'sendMessage', chat_id: chat, text }));

  beforeAll(async () => {
    emulator = await TelegramEmulator.start();
  });
  beforeEach(() => {
    prefix = `t-replies-${randomUUID().slice(0, 8)}`;
    identity = emulator.addBot({ floodLimits: { perChatPerSecond: 1, chatBurst: 1 } });
  });
  afterAll(async () => {
    await Promise.all(executors.map((e) => e.close()));
    await Promise.all(pacers.map((p) => p.close()));
    await emulator.stop();
  });

  it('waits for the slot of each reply, and does not send one that has none within max_wait', async () => {
    const metrics = new RelaygramMetrics({ defaultMetrics: false });
    const cfg = config({ perChatPerSecond: 1, chatBurst: 1, maxWaitMs: 1_500 });
    // The pacer's connection is up before the three replies race for slots: a connection
    // still being made on a loaded machine would spend their max_wait.
    const pacer = OutboundPacer.connect(cfg.redis);
    pacers.push(pacer);
    await pacer.pauses('reply-bot');
    const replies = executor(cfg, metrics, pacer);
    const outcomes = await Promise.all(
      [1, 2, 3].map((n) => replies.execute(source(n), reply(42, `r${n}`))),
    );
    expect([...outcomes].sort()).toEqual(['ok', 'ok', 'paced']);
    const sent = emulator.sent(identity.id, { method: 'sendMessage' });
    expect(sent).toHaveLength(2);
    expect(emulator.floodStats(identity.id)).toMatchObject({ limited: 0 });
    expect(sent[1]!.time - sent[0]!.time).toBeGreaterThanOrEqual(1_000);
    const text = await metrics.registry.metrics();
    expect(text).toContain('relaygram_webhook_reply_calls_total{route="site",outcome="paced"} 1');
    expect(text).toMatch(/relaygram_outbound_paced_total\{bot="reply-bot",budget="chat"\} 1/);
    expect(text).toMatch(
      /relaygram_outbound_wait_seconds_count\{bot="reply-bot",budget="chat"\} 1/,
    );
  });

  it('shares the budgets with every other process: a gateway slot taken first delays the reply', async () => {
    const cfg = config({ perChatPerSecond: 1, chatBurst: 1 });
    const gateway = OutboundPacer.connect(cfg.redis);
    pacers.push(gateway);
    const bot = cfg.bots[0] as BotConfig;
    expect(await gateway.acquire(bot, 'sendMessage', { chat_id: 43 })).toMatchObject({
      kind: 'go',
    });
    const replies = executor(cfg, new RelaygramMetrics({ defaultMetrics: false }), gateway);
    expect(await replies.execute(source(1), reply(43, 'after the gateway'))).toBe('ok');
    const [call] = emulator.sent(identity.id, { method: 'sendMessage' });
    expect(call?.params['text']).toBe('after the gateway');
  });

  it('turns a Telegram 429 on a reply into a pause of its chat for every process', async () => {
    const metrics = new RelaygramMetrics({ defaultMetrics: false });
    const cfg = config({ perChatPerSecond: 10, chatBurst: 5 });
    const replies = executor(cfg, metrics);
    emulator.failTooManyRequests(identity.id, 3, 'sendMessage', 1);
    expect(await replies.execute(source(1), reply(44, 'flooded'))).toBe('error');
    const other = OutboundPacer.connect(cfg.redis);
    pacers.push(other);
    const pauses = await other.pauses('reply-bot');
    expect(pauses.chats).toEqual([{ chat: '44', until: expect.any(Number) }]);
    expect((pauses.chats[0]?.until ?? 0) - pauses.now).toBeGreaterThan(2_000);
    expect(await metrics.registry.metrics()).toContain(
      'relaygram_telegram_429_total{bot="reply-bot",scope="chat"} 1',
    );
  });

  it('leaves alone replies that send nothing', async () => {
    const replies = executor(
      config({ maxWaitMs: 0 }),
      new RelaygramMetrics({ defaultMetrics: false }),
    );
    const action = Buffer.from(
      JSON.stringify({ method: 'sendChatAction', chat_id: 45, action: 'typing' }),
    );
    const outcomes = await Promise.all([1, 2, 3].map((n) => replies.execute(source(n), action)));
    expect(outcomes).toEqual(['ok', 'ok', 'ok']);
  });
});
