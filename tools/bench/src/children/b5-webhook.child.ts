import { Queue } from 'bullmq';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { serveBareWebhook } from './bare-webhook';
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

async function start(params: {
  redisUrl: string;
  prefix: string;
  queue: string;
  bot: string;
  secret: string;
}): Promise<{ url: string }> {
  connection = new Redis(params.redisUrl, { maxRetriesPerRequest: null });
  const jobs = new Queue<{ body: string }>(params.queue, {
    connection,
    prefix: params.prefix,
    skipVersionCheck: true,
  });
  jobs.on('error', () => undefined);
  queue = jobs;
  const served = await serveBareWebhook({
    bot: params.bot,
    secret: params.secret,
    accept: async (raw) => {
      const body = raw.toString('utf8');
      await jobs.add('update', { body }, { removeOnComplete: true, removeOnFail: true });
      return { status: 200, body: { ok: true } };
    },
  });
  app = served.app;
  return { url: served.url };
}

serveChild({ start }, async () => {
  await app?.close();
  await queue?.close();
  await connection?.quit();
});
