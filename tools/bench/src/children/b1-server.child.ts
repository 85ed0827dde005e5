import { createHash, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
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
import { serveChild } from './child-runtime';

/**
 * Baseline B1: the least a webhook endpoint can do and still do ingress's job. Plain
 * Fastify keeps the raw bytes, checks the secret token (hashed and compared in constant
 * time, as the spec requires of every secret comparison), reads update_id and the chat,
 * and runs the same dedup+enqueue script through `UpdateEnqueuer`, drain-job add
 * included. No Nest, no routing rules, no logging, no metrics.
 */
interface Parsed {
  raw: Buffer;
  update: { update_id?: unknown; message?: { chat?: { id?: number } } };
}

let app: FastifyInstance | undefined;
let redis: RelaygramRedis | undefined;
let scheduler: DrainScheduler | undefined;

const digest = (value: string | Buffer) => createHash('sha256').update(value).digest();

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
  const secret = digest(params.secret);

  app = Fastify({ bodyLimit: 1024 * 1024 });
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer' },
    (_request, body: Buffer, done) => {
      try {
        done(null, { raw: body, update: JSON.parse(body.toString('utf8')) } satisfies Parsed);
      } catch {
        done(Object.assign(new Error('not JSON'), { statusCode: 400 }), undefined);
      }
    },
  );
  app.post<{ Params: { botId: string }; Body: Parsed }>(
    '/webhooks/telegram/:botId',
    async (request, reply) => {
      if (request.params.botId !== params.bot)
        return reply.code(404).send({ error: 'unknown bot' });
      const token = request.headers['x-telegram-bot-api-secret-token'];
      if (typeof token !== 'string' || !timingSafeEqual(digest(token), secret)) {
        return reply.code(401).send({ error: 'unauthorized' });
      }
      const { raw, update } = request.body;
      const updateId = update.update_id;
      if (typeof updateId !== 'number' || !Number.isSafeInteger(updateId) || updateId < 0) {
        return reply.code(400).send({ error: 'bad update_id' });
      }
      const chatId = update.message?.chat?.id;
      const deliveryId = newDeliveryId();
      const lane = laneId(
        params.route,
        params.bot,
        chatId === undefined ? { kind: 'shared' } : { kind: 'chat', chatId },
      );
      const result = await enqueuer.enqueue({
        bot: params.bot,
        updateId,
        body: raw,
        deliveries: [{ route: params.route, lane, deliveryId }],
      });
      return reply.code(202).send(result);
    },
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
}

serveChild({ start }, async () => {
  await app?.close();
  await scheduler?.close();
  await redis?.quit();
});
