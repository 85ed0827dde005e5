import http, { type ClientRequest, type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { BotState, WebhookConfig } from './bot-state';
import type { JsonObject, Update } from './emulator.types';
import type { WebhookSettings } from './method-call';
import { updateType, webhookQueueKey } from './update-types';

type Outcome =
  | { ok: true; reply: JsonObject | undefined }
  | { ok: false; message: string; retryAfterMs?: number };

interface Lane {
  readonly key: string;
  readonly ids: number[];
  failures: number;
  timer: NodeJS.Timeout | undefined;
}

/** The Bot API server honours a webhook's Retry-After up to an hour. */
const MAX_RETRY_AFTER_S = 3600;
/** A webhook reply bigger than this is not read as a method call. */
const MAX_REPLY_BYTES = 1 << 20;

export type WebhookReplyHandler = (method: string, params: JsonObject) => void;

/**
 * Pushes a bot's pending updates to its webhook the way the Bot API server's WebhookActor
 * does: updates are split into queues (per chat for messages, per user for callback and
 * inline queries), each queue sends one update at a time and in order, at most
 * max_connections requests are in flight, a 2xx answer confirms the update and anything else
 * (redirects included: they are never followed) records the error on the bot and retries that
 * queue after a doubling delay, or after the target's Retry-After.
 */
export class WebhookPusher {
  private readonly lanes = new Map<string, Lane>();
  private readonly ready: Lane[] = [];
  private readonly requests = new Set<ClientRequest>();
  private readonly agent: http.Agent;
  private readonly target: URL;
  private inFlight = 0;
  private stopped = false;

  constructor(
    private readonly bot: BotState,
    private readonly config: WebhookConfig,
    private readonly settings: WebhookSettings,
    private readonly onReply: WebhookReplyHandler,
  ) {
    this.target = new URL(config.url);
    const agentOptions = { keepAlive: true, maxSockets: config.maxConnections };
    this.agent =
      this.target.protocol === 'https:'
        ? new https.Agent(agentOptions)
        : new http.Agent(agentOptions);
  }

  start(): void {
    for (const update of this.bot.queue.values()) this.add(update);
    this.pump();
  }

  enqueue(update: Update): void {
    this.add(update);
    this.pump();
  }

  /** Aborts in-flight requests: their updates stay pending, as they were never confirmed. */
  stop(): void {
    this.stopped = true;
    for (const lane of this.lanes.values()) clearTimeout(lane.timer);
    this.lanes.clear();
    this.ready.length = 0;
    for (const request of this.requests) request.destroy();
    this.requests.clear();
    this.agent.destroy();
  }

  private add(update: Update): void {
    const type = updateType(update) ?? '';
    const key = webhookQueueKey(type, update[type]) ?? `u${update.update_id}`;
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = { key, ids: [], failures: 0, timer: undefined };
      this.lanes.set(key, lane);
      this.ready.push(lane);
    }
    lane.ids.push(update.update_id);
  }

  private pump(): void {
    while (!this.stopped && this.inFlight < this.config.maxConnections && this.ready.length > 0) {
      const lane = this.ready.shift() as Lane;
      const update = this.headOf(lane);
      if (!update) {
        this.lanes.delete(lane.key);
        continue;
      }
      this.inFlight++;
      void this.deliver(update).then((outcome) => this.settle(lane, update.update_id, outcome));
    }
  }

  /** The lane's first update still pending (a drop may have removed some). */
  private headOf(lane: Lane): Update | undefined {
    while (lane.ids.length > 0) {
      const update = this.bot.queue.get(lane.ids[0] as number);
      if (update) return update;
      lane.ids.shift();
    }
    return undefined;
  }

  private settle(lane: Lane, updateId: number, outcome: Outcome): void {
    this.inFlight--;
    if (this.stopped) return;
    if (outcome.ok) {
      this.bot.queue.delete(updateId);
      lane.ids.shift();
      lane.failures = 0;
      if (lane.ids.length > 0) this.ready.push(lane);
      else this.lanes.delete(lane.key);
      if (outcome.reply) this.runReply(outcome.reply);
    } else {
      this.bot.webhookError = { date: Math.floor(Date.now() / 1000), message: outcome.message };
      lane.failures++;
      const backoff = Math.min(
        this.settings.retryDelayMs * 2 ** (lane.failures - 1),
        this.settings.maxRetryDelayMs,
      );
      lane.timer = setTimeout(() => {
        lane.timer = undefined;
        if (this.stopped) return;
        this.ready.push(lane);
        this.pump();
      }, outcome.retryAfterMs ?? backoff);
    }
    this.pump();
  }

  /** Like Telegram, a 2xx JSON answer with a `method` is executed for the bot. */
  private runReply(reply: JsonObject): void {
    const method = reply['method'];
    if (typeof method !== 'string') return;
    const lower = method.toLowerCase();
    const refused = ['setwebhook', 'deletewebhook', 'close', 'logout'];
    if (refused.includes(lower) || lower.startsWith('get')) return;
    const params: JsonObject = { ...reply };
    delete params['method'];
    this.onReply(method, params);
  }

  private deliver(update: Update): Promise<Outcome> {
    const body = Buffer.from(JSON.stringify(update));
    return new Promise<Outcome>((resolve) => this.attempt(body, true, resolve));
  }

  private attempt(body: Buffer, mayRetry: boolean, resolve: (outcome: Outcome) => void): void {
    const headers: Record<string, string | number> = {
      'content-type': 'application/json',
      'content-length': body.length,
    };
    if (this.config.secretToken) {
      headers['x-telegram-bot-api-secret-token'] = this.config.secretToken;
    }
    const transport = this.target.protocol === 'https:' ? https : http;
    const request = transport.request(this.target, {
      method: 'POST',
      agent: this.agent,
      headers,
      timeout: this.settings.timeoutMs,
    });
    this.requests.add(request);
    let done = false;
    const finish = (outcome: Outcome): void => {
      if (done) return;
      done = true;
      this.requests.delete(request);
      resolve(outcome);
    };
    request.on('socket', (socket) => {
      if (!this.bot.webhookIp) {
        socket.once('connect', () => {
          this.bot.webhookIp = socket.remoteAddress;
        });
      }
    });
    request.on('timeout', () => {
      request.destroy(Object.assign(new Error('timeout'), { code: 'EREADTIMEOUT' }));
    });
    request.on('response', (response) => this.readResponse(response, finish));
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (done) return;
      // A kept-alive socket the target closed meanwhile: Node's advice is to retry once.
      if (mayRetry && request.reusedSocket && error.code === 'ECONNRESET') {
        this.requests.delete(request);
        done = true;
        this.attempt(body, false, resolve);
        return;
      }
      finish({ ok: false, message: describeNetworkError(error) });
    });
    request.end(body);
  }

  private readResponse(response: IncomingMessage, finish: (outcome: Outcome) => void): void {
    const status = response.statusCode ?? 0;
    if (status < 200 || status > 299) {
      response.resume();
      response.on('end', () =>
        finish({
          ok: false,
          message:
            `Wrong response from the webhook: ${status} ${response.statusMessage ?? ''}`.trimEnd(),
          retryAfterMs: retryAfterMs(response.headers['retry-after']),
        }),
      );
      response.on('error', () => finish({ ok: false, message: 'Webhook connection closed' }));
      return;
    }
    const isJson = (response.headers['content-type'] ?? '').includes('json');
    const chunks: Buffer[] = [];
    let size = 0;
    response.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (isJson && size <= MAX_REPLY_BYTES) chunks.push(chunk);
    });
    response.on('end', () => finish({ ok: true, reply: parseReply(isJson, size, chunks) }));
    // The answer started with a 2xx: the update counts as delivered even if the body breaks.
    response.on('error', () => finish({ ok: true, reply: undefined }));
  }
}

function parseReply(isJson: boolean, size: number, chunks: Buffer[]): JsonObject | undefined {
  if (!isJson || size === 0 || size > MAX_REPLY_BYTES) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as JsonObject)
      : undefined;
  } catch {
    return undefined;
  }
}

function retryAfterMs(header: string | undefined): number | undefined {
  if (header === undefined || !/^\d+$/.test(header.trim())) return undefined;
  const seconds = Math.min(Number(header), MAX_RETRY_AFTER_S);
  return seconds > 0 ? seconds * 1000 : undefined;
}

/** The wording getWebhookInfo shows for network failures. */
function describeNetworkError(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'ECONNREFUSED':
      return 'Connection refused';
    case 'ECONNRESET':
    case 'EPIPE':
      return 'Connection reset by peer';
    case 'ETIMEDOUT':
      return 'Connection timed out';
    case 'EREADTIMEOUT':
      return 'Read timeout expired';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'Failed to resolve host: Name or service not known';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'No route to host';
    default:
      return error.message;
  }
}
