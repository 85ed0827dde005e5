import { DELIVERY_LOG_DEFAULTS } from '@relaygram/contracts';
import type { Secret } from './secret';

export type BotMode = 'polling' | 'webhook';
export type Ordering = 'chat' | 'strict' | 'none';
export type DeliveryFormat = 'update' | 'envelope';
export type SignatureScheme = 'relaygram-v1' | 'standard-webhooks';

export const BOT_MODES: readonly BotMode[] = ['polling', 'webhook'];
export const ORDERINGS: readonly Ordering[] = ['chat', 'strict', 'none'];
export const DELIVERY_FORMATS: readonly DeliveryFormat[] = ['update', 'envelope'];
export const SIGNATURE_SCHEMES: readonly SignatureScheme[] = ['relaygram-v1', 'standard-webhooks'];

/** Bot API methods no client, route or webhook reply may call (SPEC section 6). */
export const RESERVED_METHODS: readonly string[] = [
  'getupdates',
  'setwebhook',
  'deletewebhook',
  'logout',
  'close',
];

export interface RedisConfig {
  readonly url: string;
  readonly prefix: string;
  /**
   * Replicas that must hold an accepted update before ingress acknowledges it to
   * Telegram (WAIT); 0: answered once the primary has it (`wait_replicas`).
   */
  readonly waitReplicas: number;
  /** How long ingress waits for them before answering 503 (`wait_timeout`). */
  readonly waitTimeoutMs: number;
}

export interface TelegramConfig {
  /** Bot API root without a trailing slash, e.g. https://api.telegram.org */
  readonly apiBase: string;
}

export interface WebhookConfig {
  readonly url: string;
  readonly secretTokenEnv: string;
  readonly secretToken: Secret;
  readonly maxConnections: number;
  readonly manage: boolean;
  /** Period of the getWebhookInfo check (`check_every`). */
  readonly checkEveryMs: number;
}

/**
 * A bot's outbound pacing (SPEC section 9): every call that sends or edits a message
 * takes a slot from these budgets, shared by every process through Redis.
 */
export interface OutboundConfig {
  /** false: calls go out unpaced (a local Bot API server without flood limits). */
  readonly enabled: boolean;
  /** Sends per second for the whole bot. */
  readonly perSecond: number;
  /** Sends per second to one chat, after a burst of `chatBurst`. */
  readonly perChatPerSecond: number;
  readonly chatBurst: number;
  /** Sends per minute to one group or channel (chat ids below 0, or `@username`). */
  readonly perGroupPerMinute: number;
  /** How long a call may wait for its slot before it is answered 429. */
  readonly maxWaitMs: number;
  /** Reserved for broadcasts: the share of perSecond they may use (0-1). */
  readonly broadcastShare: number;
}

export interface BotConfig {
  readonly id: string;
  readonly tokenEnv: string;
  readonly token: Secret;
  /** The number before the colon of the token (the bot's user id); '' when not known. */
  readonly numericId: string;
  readonly username?: string;
  readonly mode: BotMode;
  readonly allowedUpdates: readonly string[];
  readonly default: boolean;
  readonly webhook?: WebhookConfig;
  /** Always set by the loader; optional so that hand-built configs (tests) may leave it out. */
  readonly outbound?: OutboundConfig;
}

export interface RetryConfig {
  readonly maxAgeMs: number;
  readonly backoffCapMs: number;
  readonly maxConsecutive5xx: number;
}

export interface RouteMatch {
  readonly updateTypes?: readonly string[];
  readonly userIds?: readonly number[];
  readonly chatIds?: readonly number[];
  /** Lower-cased, with the leading slash: `/admin`. */
  readonly commands?: readonly string[];
  readonly callbackPrefixes?: readonly string[];
}

export interface RouteConfig {
  readonly name: string;
  /** The bots this route takes updates from; every configured bot when the key is absent. */
  readonly bots: readonly string[];
  readonly targetUrl: string;
  readonly match?: RouteMatch;
  readonly format: DeliveryFormat;
  readonly ordering: Ordering;
  readonly concurrency: number;
  readonly timeoutMs: number;
  readonly signingSecretEnv?: string;
  readonly signingSecret?: Secret;
  readonly signature: SignatureScheme;
  readonly serviceTokenEnv?: string;
  readonly serviceToken?: Secret;
  readonly telegramSecretTokenEnv?: string;
  readonly telegramSecretToken?: Secret;
  readonly webhookReply: boolean;
  readonly retry: RetryConfig;
}

/**
 * A pull route (`pull: { client }` instead of `target_url`): its deliveries wait in one
 * lane per bot, in acceptance order, until its client takes them with the drop-in's
 * getUpdates; no drain job ever sends them, so it has no ordering, concurrency,
 * timeout, signing or retry settings but `retry.max_age`.
 */
export interface PullRouteConfig {
  readonly name: string;
  readonly bots: readonly string[];
  readonly match?: RouteMatch;
  readonly pull: { readonly client: string };
  /** An update its client has not confirmed by then goes dead as `expired`. */
  readonly maxAgeMs: number;
}

export interface ClientConfig {
  readonly name: string;
  readonly tokenEnv: string;
  readonly token: Secret;
  readonly bots: readonly string[];
  /** Allowed Bot API methods, lower-cased; undefined means every method but the reserved ones. */
  readonly methods?: readonly string[];
  /**
   * May start broadcasts (`clients[].broadcast`, default false). Always set by the
   * loader; optional so that hand-built configs (tests) may leave it out (= false).
   */
  readonly broadcast?: boolean;
}

/**
 * The delivery log (`delivery_log`): every attempt and every update's fan-out, kept in
 * Redis streams capped per route and per bot and trimmed to `maxAgeMs`.
 */
export interface DeliveryLogConfig {
  /** false: nothing is recorded (what is already logged ages out). */
  readonly enabled: boolean;
  /** Approximate cap of one route's attempt stream. */
  readonly attemptsPerRoute: number;
  /** Approximate cap of one bot's update stream. */
  readonly updatesPerBot: number;
  /** Entries older than this are dropped; at most a day. */
  readonly maxAgeMs: number;
}

/** The validated, frozen configuration. */
export interface RelaygramConfig {
  readonly redis: RedisConfig;
  readonly telegram: TelegramConfig;
  readonly bots: readonly BotConfig[];
  /** Push routes: the dispatcher delivers them to their target_url. */
  readonly routes: readonly RouteConfig[];
  /**
   * Pull routes, served by the gateway's drop-in getUpdates. Always set by the loader;
   * optional so that hand-built configs (tests) may leave it out (see `pullRoutesOf`).
   */
  readonly pullRoutes?: readonly PullRouteConfig[];
  readonly clients: readonly ClientConfig[];
  /**
   * Always set by the loader; optional so that hand-built configs (tests) may leave it
   * out (see `deliveryLogOf`).
   */
  readonly deliveryLog?: DeliveryLogConfig;
  /** Non-fatal findings (a route without any secret...), one line each with its YAML path. */
  readonly warnings: readonly string[];
  /** The file it was loaded from. */
  readonly source: string;
}

/** The config's pull routes (none for a hand-built config without the key). */
export function pullRoutesOf(config: RelaygramConfig): readonly PullRouteConfig[] {
  return config.pullRoutes ?? [];
}

/** The config's delivery log settings (the defaults for a hand-built config without them). */
export function deliveryLogOf(config: RelaygramConfig): DeliveryLogConfig {
  return config.deliveryLog ?? DELIVERY_LOG_DEFAULTS;
}
