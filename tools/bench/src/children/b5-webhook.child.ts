import { createHash, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Queue } from 'bullmq';
import Fastify, { type FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { serveChild } from './child-runtime';

/**
 * The webhook half of baseline B5, the bare pipeline: plain Fastify checks the secret
 * token and the update_id, and adds one BullMQ job carrying the update's bytes, which a
 * B2 worker POSTs on. The stack alone (Fastify, ioredis, BullMQ, undici) with none of
 * Relaygram's work: no dedup, no routing, no lanes, no signing, no logs or metrics. Its
 * ramp is the most the end-to-end path could sustain on the machine.
 */
let app: FastifyInstance | undefined;
let queue: Queue | undefined;
let connection: Redis | undefined;

const digest = (value: string | Buffer) => createHash('sha256').update(value).digest();

async function start(params: {
  redisUrl: string;
  prefix: string;
  queue: string;
  bot: string;
  secret: string;
}): Promise<{ url: string }> {
  connection = new Redis(params.redisUrl, { maxRetriesPerRequest: null });
  queue = new Queue<{ body: string }>(params.queue, {
    connection,
    prefix: params.prefix,
    skipVersionCheck: true,
  });
  queue.on('error', () => undefined);
  const secret = digest(params.secret);

  app = Fastify({ bodyLimit: 1024 * 1024 });
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) =>
    done(null, body),
  );
  app.post<{ Params: { botId: string }; Body: Buffer }>(
    '/webhooks/telegram/:botId',
    async (request, reply) => {
      if (request.params.botId !== params.bot)
        return reply.code(404).send({ error: 'unknown bot' });
      const token = request.headers['x-telegram-bot-api-secret-token'];
      if (typeof token !== 'string' || !timingSafeEqual(digest(token), secret)) {
        return reply.code(401).send({ error: 'unauthorized' });
      }
      const body = request.body.toString('utf8');
      let updateId: unknown;
      try {
        updateId = (JSON.parse(body) as { update_id?: unknown }).update_id;
      } catch {
        return reply.code(400).send({ error: 'not JSON' });
      }
      if (typeof updateId !== 'number' || !Number.isSafeInteger(updateId) || updateId < 0) {
        return reply.code(400).send({ error: 'bad update_id' });
      }
      await queue?.add('update', { body }, { removeOnComplete: true, removeOnFail: true });
      return reply.code(200).send({ ok: true });
    },
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
}

serveChild({ start }, async () => {
  await app?.close();
  await queue?.close();
  await connection?.quit();
});
