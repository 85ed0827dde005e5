import type { FastifyInstance } from 'fastify';
import { laneId } from '@relaygram/contracts';
import {
  DrainScheduler,
  UpdateEnqueuer,
  createRedis,
  newDeliveryId,
  queueContext,
  waitForRedis,
  type RelaygramRedis,
} from '@relaygram/queue';
import { serveBareWebhook } from './bare-webhook';
import { serveChild } from './child-runtime';

/**
 * Baseline B1: the least a webhook endpoint can do and still do ingress's job. Plain
 * Fastify keeps the raw bytes, checks the secret token (hashed and compared in constant
 * time, as the spec requires of every secret comparison), reads update_id and the chat,
 * and runs the same dedup+enqueue script through `UpdateEnqueuer`, drain-job add
 * included. No Nest, no routing rules, no logging, no metrics.
 */
let app: FastifyInstance | undefined;
let redis: RelaygramRedis | undefined;
let scheduler: DrainScheduler | undefined;

async function start(params: {
  redisUrl: string;
  prefix: string;
  bot: string;
  route: string;
  secret: string;
}): Promise<{ url: string }> {
  redis = createRedis(params.redisUrl, { connectionName: 'bench-b1' });
  if (!(await waitForRedis(redis))) throw new Error(`no Redis at ${params.redisUrl}`);
  const ctx = queueContext(redis, params.prefix);
  scheduler = new DrainScheduler(ctx);
  const enqueuer = new UpdateEnqueuer(ctx, scheduler);
  const served = await serveBareWebhook({
    bot: params.bot,
    secret: params.secret,
    accept: async (raw, update) => {
      const chatId = update.message?.chat?.id;
      const lane = laneId(
        params.route,
        params.bot,
        chatId === undefined ? { kind: 'shared' } : { kind: 'chat', chatId },
      );
      const result = await enqueuer.enqueue({
        bot: params.bot,
        updateId: update.update_id,
        body: raw,
        deliveries: [{ route: params.route, lane, deliveryId: newDeliveryId() }],
      });
      return { status: 202, body: result };
    },
  });
  app = served.app;
  return { url: served.url };
}

serveChild({ start }, async () => {
  await app?.close();
  await scheduler?.close();
  await redis?.quit();
});
