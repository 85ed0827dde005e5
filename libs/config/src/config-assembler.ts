import type {
  BotConfig,
  ClientConfig,
  OutboundConfig,
  PullRouteConfig,
  RedisConfig,
  RelaygramConfig,
  RetryConfig,
  RouteConfig,
  RouteMatch,
  TelegramConfig,
  WebhookConfig,
} from './config.types';
import { parseDuration } from './duration';
import { DEFAULT_OUTBOUND } from './outbound';
import type { EnvSecrets } from './env-secrets';
import type { ProblemList } from './problem-list';
import {
  assemblePullRoute,
  checkPullRouteClients,
  type PullRouteEntry,
} from './pull-route-assembler';
import type { BotDto, OutboundDto, WebhookDto } from './schema/bot.dto';
import type { ClientDto } from './schema/client.dto';
import { DEFAULTS } from './schema/config-defaults';
import { BOT_TOKEN, isMapping, KNOWN_UPDATE_TYPES, NAME } from './schema/config-rules';
import type { RelaygramConfigDto } from './schema/relaygram-config.dto';
import type { RetryDto, RouteDto, RouteMatchDto } from './schema/route.dto';
import { httpUrlProblem, redisUrlProblem } from './schema/value-checks';
import {
  botTokenRule,
  clientTokenRule,
  serviceTokenRule,
  signingSecretRule,
  telegramSecretTokenRule,
} from './secret-rules';
import { Secret } from './secret';
import { formatPath, type PathSegment } from './yaml-path';

// Stands in for a secret that failed to resolve; that failure is a problem, so a config
// holding it is never handed out.
const UNRESOLVED = new Secret('');

export interface AssemblyContext {
  readonly env: NodeJS.ProcessEnv;
  readonly secrets: EnvSecrets;
  readonly problems: ProblemList;
  readonly warnings: ProblemList;
}

export type AssembledConfig = Omit<RelaygramConfig, 'warnings' | 'source'>;

/**
 * Turns the validated YAML into the typed config: defaults, env overrides, secrets,
 * cross-references and uniqueness. It runs even when field rules failed, so every
 * problem is listed at once; each check looks only at values of the right shape, and
 * the result is used only when no problem was found.
 */
export function assembleConfig(dto: RelaygramConfigDto, ctx: AssemblyContext): AssembledConfig {
  const bots = assembleBots(entries('bots', dto.bots), ctx);
  if (bots.length === 0) {
    ctx.warnings.add(
      ['bots'],
      'none configured: Relaygram runs but receives nothing. Add a bot as in config/relaygram.example.yaml, or try `npm run demo`',
    );
  }
  const pulls: PullRouteEntry[] = [];
  const routes = assembleRoutes(entries('routes', dto.routes), bots, ctx, pulls);
  const clientEntries = entries('clients', dto.clients);
  const clients = assembleClients(clientEntries, bots, ctx);
  const clientPaths = new Map(clientEntries.map(({ dto, path }) => [dto.name, path] as const));
  checkPullRouteClients(pulls, clients, clientPaths, ctx.problems);
  return {
    redis: assembleRedis(dto, ctx),
    telegram: assembleTelegram(dto, ctx),
    bots,
    routes,
    pullRoutes: pulls.map((entry) => entry.route),
    clients,
  };
}

function assembleRedis(dto: RelaygramConfigDto, ctx: AssemblyContext): RedisConfig {
  const override = envOverride(ctx, 'REDIS_URL', redisUrlProblem, 'redis.url');
  return {
    url: override ?? dto.redis?.url ?? DEFAULTS.redisUrl,
    prefix: dto.redis?.prefix ?? DEFAULTS.redisPrefix,
  };
}

function assembleTelegram(dto: RelaygramConfigDto, ctx: AssemblyContext): TelegramConfig {
  const override = envOverride(ctx, 'TELEGRAM_API_BASE', httpUrlProblem, 'telegram.api_base');
  const apiBase = override ?? dto.telegram?.api_base ?? DEFAULTS.telegramApiBase;
  return { apiBase: typeof apiBase === 'string' ? apiBase.replace(/\/+$/, '') : apiBase };
}

function envOverride(
  ctx: AssemblyContext,
  name: string,
  check: (value: unknown) => string | undefined,
  key: string,
): string | undefined {
  if (ctx.secrets.noEnv) return undefined;
  const value = ctx.env[name];
  if (value === undefined || value === '') return undefined;
  const problem = check(value);
  if (problem !== undefined) ctx.problems.addGlobal(name, `${problem} (it overrides ${key})`);
  return value;
}

function assembleBots(items: Entry<BotDto>[], ctx: AssemblyContext): BotConfig[] {
  const ids = new FirstSeen();
  const tokens = new FirstSeen();
  const numericIds = new FirstSeen();
  let defaultBot: readonly PathSegment[] | undefined;
  const bots: BotConfig[] = [];
  for (const { dto, path } of items) {
    claimName(ids, dto.id, [...path, 'id'], 'id', ctx);
    const tokenPath = [...path, 'token_env'];
    const token = ctx.secrets.resolve(tokenPath, dto.token_env, botTokenRule);
    if (token) {
      const earlier = tokens.claim(ctx.secrets.identity(dto.token_env, token), tokenPath);
      if (earlier) {
        ctx.problems.add(tokenPath, `same bot token as ${formatPath(earlier)}`);
      } else {
        // The drop-in finds a bot by the number before the colon of its token: two bots
        // with one number could not be told apart there.
        const numericId = BOT_TOKEN.exec(token.reveal())?.[1];
        const twin = numericId === undefined ? undefined : numericIds.claim(numericId, tokenPath);
        if (twin) {
          ctx.problems.add(
            tokenPath,
            `its token's bot number is also the one of ${formatPath(twin)}; each bot needs its own (the Bot API drop-in tells bots apart by it)`,
          );
        }
      }
    }
    if (dto.default === true) {
      if (defaultBot) {
        ctx.problems.add(
          [...path, 'default'],
          `only one bot may be the default, and ${formatPath(defaultBot)} already is`,
        );
      } else {
        defaultBot = path;
      }
    }
    const allowedUpdates = unique(listOf(dto.allowed_updates) ?? DEFAULTS.allowedUpdates);
    (listOf(dto.allowed_updates) ?? []).forEach((type, index) => {
      if (typeof type === 'string' && !KNOWN_UPDATE_TYPES.includes(type)) {
        ctx.warnings.add(
          [...path, 'allowed_updates', index],
          `"${type}" is not an update type this version knows; it is passed to Telegram as is`,
        );
      }
    });
    const webhook =
      dto.mode === 'webhook' && isMapping(dto.webhook)
        ? assembleWebhook(dto.webhook, [...path, 'webhook'], ctx)
        : undefined;
    bots.push({
      id: dto.id,
      tokenEnv: dto.token_env,
      token: token ?? UNRESOLVED,
      numericId: token ? (BOT_TOKEN.exec(token.reveal())?.[1] ?? '') : '',
      ...(dto.username ? { username: dto.username } : {}),
      mode: dto.mode,
      allowedUpdates,
      // An explicit `default: false` on the only bot leaves bot-less paths answering 404.
      default: dto.default ?? items.length === 1,
      ...(webhook ? { webhook } : {}),
      outbound: assembleOutbound(isMapping(dto.outbound) ? dto.outbound : undefined),
    });
  }
  return bots;
}

function assembleOutbound(dto: OutboundDto | undefined): OutboundConfig {
  const defaults = DEFAULT_OUTBOUND;
  const maxWait = dto?.max_wait === undefined ? undefined : parseDuration(dto.max_wait);
  return {
    enabled: dto?.enabled ?? defaults.enabled,
    perSecond: dto?.per_second ?? defaults.perSecond,
    perChatPerSecond: dto?.per_chat_per_second ?? defaults.perChatPerSecond,
    chatBurst: dto?.chat_burst ?? defaults.chatBurst,
    perGroupPerMinute: dto?.per_group_per_minute ?? defaults.perGroupPerMinute,
    maxWaitMs: maxWait ?? defaults.maxWaitMs,
    broadcastShare: dto?.broadcast_share ?? defaults.broadcastShare,
  };
}

function assembleWebhook(
  dto: WebhookDto,
  path: readonly PathSegment[],
  ctx: AssemblyContext,
): WebhookConfig {
  const secretTokenPath = [...path, 'secret_token_env'];
  const secretToken = ctx.secrets.resolve(
    secretTokenPath,
    dto.secret_token_env,
    telegramSecretTokenRule,
  );
  return {
    url: dto.url,
    secretTokenEnv: dto.secret_token_env,
    secretToken: secretToken ?? UNRESOLVED,
    maxConnections: dto.max_connections ?? DEFAULTS.webhookMaxConnections,
    manage: dto.manage ?? DEFAULTS.webhookManage,
    checkEveryMs:
      (dto.check_every === undefined ? undefined : parseDuration(dto.check_every)) ??
      (parseDuration(DEFAULTS.webhookCheckEvery) as number),
  };
}

function assembleRoutes(
  items: Entry<RouteDto>[],
  bots: readonly BotConfig[],
  ctx: AssemblyContext,
  /** Receives the pull routes (`pull:`), which the dispatcher never sees. */
  pulls: PullRouteEntry[],
): RouteConfig[] {
  const names = new FirstSeen();
  const routes: RouteConfig[] = [];
  for (const { dto, path } of items) {
    claimName(names, dto.name, [...path, 'name'], 'name', ctx);
    const listedBots = listOf(dto.bots);
    const routeBots = listedBots
      ? knownBots(listedBots, [...path, 'bots'], bots, ctx)
      : bots.map((bot) => bot.id);
    if (dto.pull !== undefined) {
      const match = isMapping(dto.match) ? assembleMatch(dto.match) : undefined;
      warnUnsubscribedTypes(dto.match, path, routeBots, bots, ctx);
      const maxAgeMs = assembleRetry(isMapping(dto.retry) ? dto.retry : undefined).maxAgeMs;
      const route: PullRouteConfig = assemblePullRoute(
        dto,
        path,
        routeBots,
        match,
        maxAgeMs,
        ctx.problems,
      );
      pulls.push({ route, path });
      continue;
    }
    const signature = dto.signature ?? DEFAULTS.routeSignature;
    const signingSecret = ctx.secrets.resolve(
      [...path, 'signing_secret_env'],
      dto.signing_secret_env,
      signingSecretRule(signature),
    );
    const serviceToken = ctx.secrets.resolve(
      [...path, 'service_token_env'],
      dto.service_token_env,
      serviceTokenRule,
    );
    const telegramSecretToken = ctx.secrets.resolve(
      [...path, 'telegram_secret_token_env'],
      dto.telegram_secret_token_env,
      telegramSecretTokenRule,
    );
    if (!dto.signing_secret_env && !dto.service_token_env && !dto.telegram_secret_token_env) {
      ctx.warnings.add(
        path,
        "no signing_secret_env, service_token_env or telegram_secret_token_env: the target cannot tell Relaygram's deliveries from anyone else's",
      );
    }
    const match = isMapping(dto.match) ? assembleMatch(dto.match) : undefined;
    warnUnsubscribedTypes(dto.match, path, routeBots, bots, ctx);
    routes.push({
      name: dto.name,
      bots: routeBots,
      targetUrl: dto.target_url,
      ...(match ? { match } : {}),
      format: dto.format ?? DEFAULTS.routeFormat,
      ordering: dto.ordering ?? DEFAULTS.routeOrdering,
      concurrency: dto.concurrency ?? DEFAULTS.routeConcurrency,
      timeoutMs: durationMs(dto.timeout, DEFAULTS.routeTimeout),
      ...(signingSecret ? { signingSecretEnv: dto.signing_secret_env, signingSecret } : {}),
      signature,
      ...(serviceToken ? { serviceTokenEnv: dto.service_token_env, serviceToken } : {}),
      ...(telegramSecretToken
        ? { telegramSecretTokenEnv: dto.telegram_secret_token_env, telegramSecretToken }
        : {}),
      webhookReply: dto.webhook_reply ?? DEFAULTS.routeWebhookReply,
      retry: assembleRetry(isMapping(dto.retry) ? dto.retry : undefined),
    });
  }
  return routes;
}

function assembleMatch(dto: RouteMatchDto): RouteMatch | undefined {
  const updateTypes = listOf(dto.update_types);
  const userIds = listOf(dto.user_ids);
  const chatIds = listOf(dto.chat_ids);
  const commands = listOf(dto.commands);
  const callbackPrefixes = listOf(dto.callback_prefixes);
  const match: RouteMatch = {
    ...(updateTypes ? { updateTypes: unique(updateTypes) } : {}),
    ...(userIds ? { userIds: unique(userIds) } : {}),
    ...(chatIds ? { chatIds: unique(chatIds) } : {}),
    ...(commands ? { commands: unique(lowerCase(commands)) } : {}),
    ...(callbackPrefixes ? { callbackPrefixes: unique(callbackPrefixes) } : {}),
  };
  return Object.keys(match).length ? match : undefined;
}

function assembleRetry(dto: RetryDto | undefined): RetryConfig {
  return {
    maxAgeMs: durationMs(dto?.max_age, DEFAULTS.retryMaxAge),
    backoffCapMs: durationMs(dto?.backoff_cap, DEFAULTS.retryBackoffCap),
    maxConsecutive5xx: dto?.max_consecutive_5xx ?? DEFAULTS.retryMaxConsecutive5xx,
  };
}

/** A route matching a type that none of its bots asks Telegram for never sees it. */
function warnUnsubscribedTypes(
  match: RouteMatchDto | undefined,
  routePath: readonly PathSegment[],
  routeBots: readonly string[],
  bots: readonly BotConfig[],
  ctx: AssemblyContext,
): void {
  const updateTypes = isMapping(match) ? listOf(match.update_types) : undefined;
  const subscribed = bots.filter((bot) => routeBots.includes(bot.id));
  if (!updateTypes || subscribed.length === 0) return;
  updateTypes.forEach((type, index) => {
    if (typeof type !== 'string') return;
    if (subscribed.some((bot) => bot.allowedUpdates.includes(type))) return;
    ctx.warnings.add(
      [...routePath, 'match', 'update_types', index],
      `no bot of this route has "${type}" in allowed_updates, so the route never receives it`,
    );
  });
}

function assembleClients(
  items: Entry<ClientDto>[],
  bots: readonly BotConfig[],
  ctx: AssemblyContext,
): ClientConfig[] {
  const names = new FirstSeen();
  const tokens = new FirstSeen();
  const clients: ClientConfig[] = [];
  for (const { dto, path } of items) {
    claimName(names, dto.name, [...path, 'name'], 'name', ctx);
    const tokenPath = [...path, 'token_env'];
    const token = ctx.secrets.resolve(tokenPath, dto.token_env, clientTokenRule);
    if (token) {
      const earlier = tokens.claim(ctx.secrets.identity(dto.token_env, token), tokenPath);
      if (earlier) {
        ctx.problems.add(
          tokenPath,
          `same token as ${formatPath(earlier)}; client tokens must be unique`,
        );
      }
    }
    const methods = listOf(dto.methods);
    const listedBots = listOf(dto.bots);
    const clientBots = listedBots ? knownBots(listedBots, [...path, 'bots'], bots, ctx) : [];
    clients.push({
      name: dto.name,
      tokenEnv: dto.token_env,
      token: token ?? UNRESOLVED,
      bots: clientBots,
      ...(methods ? { methods: unique(lowerCase(methods)) } : {}),
    });
  }
  return clients;
}

/** The listed bot ids that exist; each one that does not is a problem at its index. */
function knownBots(
  listed: readonly unknown[],
  path: readonly PathSegment[],
  bots: readonly BotConfig[],
  ctx: AssemblyContext,
): string[] {
  const known: string[] = [];
  listed.forEach((id, index) => {
    if (typeof id !== 'string' || !NAME.test(id)) return;
    if (bots.some((bot) => bot.id === id)) known.push(id);
    else ctx.problems.add([...path, index], `unknown bot "${id}"`);
  });
  return unique(known);
}

function claimName(
  seen: FirstSeen,
  name: unknown,
  path: readonly PathSegment[],
  key: string,
  ctx: AssemblyContext,
): void {
  if (typeof name !== 'string' || !NAME.test(name)) return;
  const earlier = seen.claim(name, path);
  if (earlier) {
    ctx.problems.add(
      path,
      `"${name}" is already the ${key} of ${formatPath(earlier.slice(0, -1))}`,
    );
  }
}

/** Remembers the first path at which each key was seen. */
class FirstSeen {
  private readonly seen = new Map<string, readonly PathSegment[]>();

  /** The earlier path holding this key, or undefined after recording this one as the first. */
  claim(key: string, path: readonly PathSegment[]): readonly PathSegment[] | undefined {
    const earlier = this.seen.get(key);
    if (earlier) return earlier;
    this.seen.set(key, path);
    return undefined;
  }
}

interface Entry<T> {
  readonly dto: T;
  readonly path: readonly PathSegment[];
}

/** The mapping items of a top-level list, with their paths; other items were reported. */
function entries<T extends object>(section: string, list: readonly T[] | undefined): Entry<T>[] {
  if (!Array.isArray(list)) return [];
  return list.flatMap((dto, index) => (isMapping(dto) ? [{ dto, path: [section, index] }] : []));
}

function durationMs(value: string | number | undefined, fallback: string): number {
  return parseDuration(value ?? fallback) ?? 0;
}

/** The list a key holds, or undefined when it holds something else (reported elsewhere). */
function listOf<T>(value: readonly T[] | undefined): readonly T[] | undefined {
  return Array.isArray(value) ? value : undefined;
}

function unique<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}

function lowerCase(values: readonly string[]): string[] {
  return values.map((value) => (typeof value === 'string' ? value.toLowerCase() : value));
}
