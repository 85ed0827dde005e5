import { createHash, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';

const digest = (value: string | Buffer) => createHash('sha256').update(value).digest();

/**
 * The secret token check of the baselines' webhook servers, as the spec asks of every
 * secret comparison: both sides hashed, compared in constant time.
 */
export function webhookSecretCheck(secret: string): (token: unknown) => boolean {
  const expected = digest(secret);
  return (token) => typeof token === 'string' && timingSafeEqual(digest(token), expected);
}

/** An update_id Telegram could send: a non-negative safe integer. */
export function isUpdateId(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** An update as the baselines read it: its id and, for a lane, its chat. */
export interface BareUpdate {
  update_id?: unknown;
  message?: { chat?: { id?: number } };
}

interface Parsed {
  raw: Buffer;
  update: BareUpdate;
}

/**
 * The webhook endpoint both baselines serve: plain Fastify keeps the raw bytes, refuses
 * another bot's path (404), a wrong secret token (401), a body that is not JSON or has
 * no valid update_id (400), and hands the rest to `accept`, whose answer it sends.
 */
export async function serveBareWebhook(options: {
  bot: string;
  secret: string;
  accept: (
    raw: Buffer,
    update: BareUpdate & { update_id: number },
  ) => Promise<{
    status: number;
    body: unknown;
  }>;
}): Promise<{ app: FastifyInstance; url: string }> {
  const secretMatches = webhookSecretCheck(options.secret);
  const app = Fastify({ bodyLimit: 1024 * 1024 });
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
      if (request.params.botId !== options.bot)
        return reply.code(404).send({ error: 'unknown bot' });
      if (!secretMatches(request.headers['x-telegram-bot-api-secret-token'])) {
        return reply.code(401).send({ error: 'unauthorized' });
      }
      const { raw, update } = request.body;
      if (!isUpdateId(update.update_id)) return reply.code(400).send({ error: 'bad update_id' });
      // Checked just above; no copy of the update per request.
      const answer = await options.accept(raw, update as BareUpdate & { update_id: number });
      return reply.code(answer.status).send(answer.body);
    },
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
}
