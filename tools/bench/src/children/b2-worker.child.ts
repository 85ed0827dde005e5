import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { request } from 'undici';
import { serveChild } from './child-runtime';

/**
 * Baseline B2: a raw BullMQ worker whose job data is the update, POSTing it with
 * undici's `request` and failing the job on a non-2xx answer. No lanes, no signing,
 * no headers beyond the content type.
 */
let worker: Worker<{ body: string }> | undefined;
let connection: Redis | undefined;

async function start(params: {
  redisUrl: string;
  prefix: string;
  queue: string;
  concurrency: number;
  target: string;
}): Promise<void> {
  connection = new Redis(params.redisUrl, { maxRetriesPerRequest: null });
  worker = new Worker<{ body: string }>(
    params.queue,
    async (job) => {
      const res = await request(params.target, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: job.data.body,
      });
      await res.body.dump();
      if (res.statusCode < 200 || res.statusCode > 299) throw new Error(`HTTP ${res.statusCode}`);
    },
    {
      connection,
      prefix: params.prefix,
      concurrency: params.concurrency,
      skipVersionCheck: true,
    },
  );
  worker.on('error', () => undefined);
}

serveChild({ start }, async () => {
  await worker?.close();
  await connection?.quit();
});
