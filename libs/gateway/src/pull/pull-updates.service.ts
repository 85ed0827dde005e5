import { randomUUID } from 'node:crypto';
import {
  Injectable,
  type BeforeApplicationShutdown,
  type OnApplicationShutdown,
  type OnModuleDestroy,
} from '@nestjs/common';
import {
  ConfigService,
  pullRoutesOf,
  type PullRouteConfig,
  type RelaygramConfig,
} from '@relaygram/config';
import { RedisKeys } from '@relaygram/contracts';
import { RelaygramMetrics } from '@relaygram/observability';
import { createRedis, pullLaneId, PullStore } from '@relaygram/queue';
import { dropInError, type DropInAnswer } from '../telegram/telegram-error.mapper';
import { readDropPending, readGetUpdatesParams } from './get-updates-params';
import { PullNotices } from './pull-notices';

/** The methods a client answers for itself on a bot where it owns a pull route. */
const PULL_METHODS = new Set(['getupdates', 'deletewebhook', 'getwebhookinfo']);

export function isPullMethod(method: string): boolean {
  return PULL_METHODS.has(method.toLowerCase());
}

const CONFLICT = dropInError(
  409,
  'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running',
);
const UNAVAILABLE = dropInError(503, 'Service Unavailable');

/** An answer already in Telegram's JSON, as bytes (updates are passed on as received). */
export interface RawAnswer {
  status: number;
  body: Buffer;
}

const OK_HEAD = Buffer.from('{"ok":true,"result":[');
const OK_TAIL = Buffer.from(']}');
const COMMA = Buffer.from(',');

function updatesAnswer(updates: readonly Buffer[]): RawAnswer {
  const parts: Buffer[] = [OK_HEAD];
  updates.forEach((update, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(update);
  });
  parts.push(OK_TAIL);
  return { status: 200, body: Buffer.concat(parts) };
}

function jsonAnswer(value: unknown): RawAnswer {
  return { status: 200, body: Buffer.from(JSON.stringify(value)) };
}

/**
 * The drop-in's getUpdates, deleteWebhook and getWebhookInfo for a client that owns a
 * pull route of the bot: Telegram's semantics over the route's pull lane (PullStore),
 * long polls woken through Redis pub/sub (PullNotices). Any gateway replica can serve
 * any call: the lane, its served mark, its remembered allowed_updates and the call that
 * may wait all live in Redis.
 */
@Injectable()
export class PullUpdatesService
  implements OnModuleDestroy, BeforeApplicationShutdown, OnApplicationShutdown
{
  #routes: ReadonlyMap<string, PullRouteConfig>;
  readonly #unsubscribe: () => void;
  readonly notices: PullNotices;

  constructor(
    config: ConfigService,
    private readonly store: PullStore,
    private readonly metrics: RelaygramMetrics,
  ) {
    this.#routes = byClientAndBot(config.config);
    this.#unsubscribe = config.onReload((next) => {
      this.#routes = byClientAndBot(next);
    });
    const keys = new RedisKeys(config.config.redis.prefix);
    this.notices = new PullNotices(keys.pullNotice('*'), () =>
      createRedis(config.config.redis.url, {
        connectionName: `relaygram-${config.service}-pull`,
        mode: 'blocking',
      }),
    );
  }

  /** The pull route through which this client reads this bot, if it has one. */
  routeFor(client: string, bot: string): PullRouteConfig | undefined {
    return this.#routes.get(`${client}\n${bot}`);
  }

  async answer(
    method: string,
    route: PullRouteConfig,
    bot: string,
    params: Readonly<Record<string, unknown>>,
    signal: () => AbortSignal,
  ): Promise<RawAnswer | DropInAnswer | undefined> {
    try {
      switch (method.toLowerCase()) {
        case 'getupdates':
          return await this.#getUpdates(route, bot, params, signal);
        case 'deletewebhook': {
          if (readDropPending(params)) await this.store.dropPending(route.name, bot);
          return jsonAnswer({ ok: true, result: true, description: 'Webhook is already deleted' });
        }
        default:
          return jsonAnswer({ ok: true, result: await this.#webhookInfo(route, bot) });
      }
    } catch {
      // Redis is away: frameworks retry a 5xx after a pause.
      return UNAVAILABLE;
    }
  }

  async #webhookInfo(route: PullRouteConfig, bot: string): Promise<Record<string, unknown>> {
    const [status] = await this.store.status([{ name: route.name, bots: [bot] }]);
    const info: Record<string, unknown> = {
      url: '',
      has_custom_certificate: false,
      pending_update_count: status?.pending ?? 0,
    };
    if (Array.isArray(status?.allowedUpdates)) info.allowed_updates = status.allowedUpdates;
    return info;
  }

  /**
   * One getUpdates: confirm and take at once; with a timeout and nothing there, wait
   * for a notice on the lane and look again, until the time is up (a last look then).
   * The wait is registered before each look, so a delivery arriving between the look
   * and the wait still wakes it. A newer call of the same client and bot ends this one
   * with Telegram's 409. Undefined: the caller left, nobody reads an answer.
   */
  async #getUpdates(
    route: PullRouteConfig,
    bot: string,
    raw: Readonly<Record<string, unknown>>,
    signal: () => AbortSignal,
  ): Promise<RawAnswer | DropInAnswer | undefined> {
    const params = readGetUpdatesParams(raw);
    const lane = pullLaneId(route.name, bot);
    const token = randomUUID();
    const deadline = Date.now() + params.timeoutSeconds * 1000;
    if (params.timeoutSeconds > 0) await this.notices.ready();
    let mode: 'claim' | 'check' = 'claim';
    for (;;) {
      const remaining = deadline - Date.now();
      const waits = remaining > 0 && !this.notices.closing;
      const wait = waits ? this.notices.wait(lane, remaining, signal()) : undefined;
      let result;
      try {
        result = await this.store.take({
          route: route.name,
          bot,
          token,
          mode,
          limit: params.limit,
          waits,
          maxAgeMs: route.maxAgeMs,
          ...(mode === 'claim' ? { offset: params.offset, allowed: params.allowed } : {}),
        });
      } catch (error) {
        wait?.cancel();
        throw error;
      }
      if (result.kind === 'conflict') {
        wait?.cancel();
        this.metrics.pullConflicts.inc({ route: route.name });
        return CONFLICT;
      }
      if (result.confirmed) this.metrics.pullConfirmed.inc({ route: route.name }, result.confirmed);
      if (result.updates.length || !wait) {
        wait?.cancel();
        if (result.updates.length)
          this.metrics.pullServed.inc({ route: route.name }, result.updates.length);
        return updatesAnswer(result.updates);
      }
      if ((await wait.done) === 'aborted') return undefined;
      mode = 'check';
    }
  }

  onModuleDestroy(): void {
    this.#unsubscribe();
  }

  /** Before the HTTP server closes: waiting calls answer now instead of holding it up. */
  beforeApplicationShutdown(): void {
    this.notices.stopWaiting();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.notices.close();
  }
}

function byClientAndBot(config: RelaygramConfig): ReadonlyMap<string, PullRouteConfig> {
  const map = new Map<string, PullRouteConfig>();
  for (const route of pullRoutesOf(config)) {
    for (const bot of route.bots) map.set(`${route.pull.client}\n${bot}`, route);
  }
  return map;
}
