import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { errorMessage, UpdateSource } from '@relaygram/contracts';
import { RELAYGRAM_LOGGER } from '@relaygram/observability';
import { BODY_LIMIT_BYTES } from '@relaygram/platform';
import type {
  FastifyError,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
} from 'fastify';
import type { Logger } from 'pino';
import { IngressBots, type IngressBot } from '../bots/ingress-bots';
import { UpdateIntake } from '../intake/update-intake';
import { parseUpdate } from '../intake/update-validation';
import { ReplicaAckError } from '../state/replica-acknowledger';
import { acceptedReply, badRequestReply, WEBHOOK_REPLIES } from './webhook-replies';
import { BOT_WEBHOOK_DOC, DEFAULT_BOT_WEBHOOK_DOC } from './webhook.docs';

/** Where Telegram posts updates: `/webhooks/telegram/:botId`, or this for the default bot. */
export const WEBHOOK_PATH = '/webhooks/telegram';

const SECRET_HEADER = 'x-telegram-bot-api-secret-token';
const JSON_TYPE = 'application/json; charset=utf-8';
const EMPTY_BODY = Buffer.alloc(0);

interface WebhookRoute {
  Params: { botId?: string };
  Body: Buffer;
}

type WebhookRequest = FastifyRequest<WebhookRoute> & { ingressBot: IngressBot | null };

function send(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.code(status).type(JSON_TYPE).send(body);
}

/**
 * The webhook adapter: the hottest path of Relaygram, so plain Fastify routes rather than
 * a Nest controller (no guards, pipes or interceptors per request), registered as an
 * encapsulated plugin when the module starts. Encapsulation keeps its content-type
 * parser and error handler to these two routes: the standalone process shares one
 * Fastify instance with the gateway, whose parsing must not change.
 *
 * Per request: find the bot and check the secret before the body is read (so an
 * unauthenticated sender cannot make us buffer a megabyte), then parse, route and
 * enqueue in one script. The handler never calls a target.
 */
@Injectable()
export class WebhookRoutes implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly bots: IngressBots,
    private readonly intake: UpdateIntake,
    @Inject(RELAYGRAM_LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    // Loaded with the other plugins when the app starts listening.
    void fastify.register((instance, _options, done) => {
      this.plugin(instance);
      done();
    });
  }

  private plugin(instance: FastifyInstance): void {
    // Any content type, or none, arrives as the raw bytes: `format: update` deliveries
    // send them unchanged, and a body that is not JSON is our 400, not Fastify's 415.
    instance.removeAllContentTypeParsers();
    instance.addContentTypeParser(
      '*',
      { parseAs: 'buffer', bodyLimit: BODY_LIMIT_BYTES },
      (_request, body, done) => done(null, body),
    );
    instance.decorateRequest('ingressBot', null);
    instance.setErrorHandler((error, request, reply) => this.fail(error, request, reply));

    const options = {
      bodyLimit: BODY_LIMIT_BYTES,
      onRequest: (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) =>
        this.authenticate(request as WebhookRequest, reply, done),
    };
    const handler = (request: FastifyRequest, reply: FastifyReply) =>
      this.receive(request as WebhookRequest, reply);
    instance.post<WebhookRoute>(
      `${WEBHOOK_PATH}/:botId`,
      { ...options, config: BOT_WEBHOOK_DOC },
      handler,
    );
    instance.post<WebhookRoute>(
      WEBHOOK_PATH,
      { ...options, config: DEFAULT_BOT_WEBHOOK_DOC },
      handler,
    );
  }

  /** 404 for an unknown or polling bot, 401 for a missing or wrong secret. */
  private authenticate(
    request: WebhookRequest,
    reply: FastifyReply,
    done: HookHandlerDoneFunction,
  ): void {
    const botId = request.params.botId;
    const bot = botId === undefined ? this.bots.current.defaultBot : this.bots.get(botId);
    if (bot === undefined || bot.secret === undefined) {
      send(reply, 404, WEBHOOK_REPLIES.notFound);
      return;
    }
    const presented = request.headers[SECRET_HEADER];
    if (typeof presented !== 'string' || presented.length === 0) {
      this.intake.rejected(bot, UpdateSource.Webhook, 401, 'secret header missing');
      send(reply, 401, WEBHOOK_REPLIES.secretMissing);
      return;
    }
    if (bot.secret(presented) < 0) {
      this.intake.rejected(bot, UpdateSource.Webhook, 401, 'secret header wrong');
      send(reply, 401, WEBHOOK_REPLIES.secretWrong);
      return;
    }
    request.ingressBot = bot;
    done();
  }

  private async receive(request: WebhookRequest, reply: FastifyReply): Promise<FastifyReply> {
    const bot = request.ingressBot as IngressBot;
    // Fastify runs no content-type parser for a request without Content-Type and without
    // a body: the body is then undefined, not an empty buffer.
    const body = request.body ?? EMPTY_BODY;
    const parsed = parseUpdate(body);
    if (!parsed.ok) {
      this.intake.rejected(bot, UpdateSource.Webhook, 400, parsed.error);
      return send(reply, 400, badRequestReply(parsed.error));
    }
    try {
      const since = this.intake.writeConnection();
      const result = await this.intake.accept(bot, parsed.update, body, UpdateSource.Webhook);
      await this.intake.replicated(since);
      return send(reply, 202, acceptedReply(result));
    } catch (error) {
      if (error instanceof ReplicaAckError) {
        this.logger.warn(
          {
            bot: bot.id,
            update_id: parsed.update.update_id,
            source: UpdateSource.Webhook,
            err: error,
          },
          'update not acknowledged: Redis replicas did not confirm it',
        );
        return send(reply, 503, WEBHOOK_REPLIES.notReplicated);
      }
      // Nothing was written (see UpdateIntake), or a script that timed out ran after all
      // and the resend is a duplicate: a 503 makes Telegram send the update again. No
      // Retry-After: Telegram's own backoff applies; and never 410, which drops the webhook.
      const answered = isRedisReply(error);
      this.logger.warn(
        {
          bot: bot.id,
          update_id: parsed.update.update_id,
          source: UpdateSource.Webhook,
          err: error,
        },
        'update not stored: Redis failed',
      );
      return send(
        reply,
        503,
        answered
          ? WEBHOOK_REPLIES.redisFailed
          : isTimeout(error)
            ? WEBHOOK_REPLIES.redisTimedOut
            : WEBHOOK_REPLIES.redisUnreachable,
      );
    }
  }

  /** Errors raised by Fastify for these routes (body too large, bad Content-Type...). */
  private fail(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const bot = (request as WebhookRequest).ingressBot;
    const status = (error as Partial<FastifyError> | null)?.statusCode ?? 500;
    if (status === 413) {
      if (bot) this.intake.rejected(bot, UpdateSource.Webhook, 413, 'body exceeds 1 MiB');
      return send(reply, 413, WEBHOOK_REPLIES.tooLarge);
    }
    if (status === 415) {
      if (bot) this.intake.rejected(bot, UpdateSource.Webhook, 400, 'malformed Content-Type');
      return send(reply, 400, WEBHOOK_REPLIES.badContentType);
    }
    if (status >= 400 && status < 500) {
      if (bot) this.intake.rejected(bot, UpdateSource.Webhook, status, errorMessage(error));
      return send(reply, status, badRequestReply(errorMessage(error)));
    }
    this.logger.error({ err: error, bot: bot?.id }, 'webhook request failed');
    return send(reply, 500, WEBHOOK_REPLIES.internal);
  }
}

/** A Redis error reply (the script or Redis refused), as opposed to no connection at all. */
function isRedisReply(error: unknown): boolean {
  return error instanceof Error && error.name === 'ReplyError';
}

/** ioredis's commandTimeout: Redis holds the connection but does not answer. */
function isTimeout(error: unknown): boolean {
  return error instanceof Error && error.message === 'Command timed out';
}
