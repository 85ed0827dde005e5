import {
  claimName,
  entries,
  FirstSeen,
  knownBots,
  listOf,
  lowerCase,
  unique,
  UNRESOLVED,
  type AssemblyContext,
  type Entry,
} from './assembly-context';
import { DELIVERY_LOG_DEFAULTS } from '@relaygram/contracts';
import type {
  BotConfig,
  ClientConfig,
  DeliveryLogConfig,
  OutboundConfig,
  RedisConfig,
  RelaygramConfig,
  TelegramConfig,
  WebhookConfig,
} from './config.types';
import { parseDuration } from './duration';
import { DEFAULT_OUTBOUND } from './outbound';
import { checkPullRouteClients, type PullRouteEntry } from './pull-route-assembler';
import { assembleRoutes } from './route-assembler';
import type { BotDto, OutboundDto, WebhookDto } from './schema/bot.dto';
import type { ClientDto } from './schema/client.dto';
import { DEFAULTS } from './schema/config-defaults';
import { BOT_TOKEN, isMapping, KNOWN_UPDATE_TYPES } from './schema/config-rules';
import type { RelaygramConfigDto } from './schema/relaygram-config.dto';
import { httpUrlProblem, redisUrlProblem } from './schema/value-checks';
import { botTokenRule, clientTokenRule, telegramSecretTokenRule } from './secret-rules';
import { formatPath, type PathSegment } from './yaml-path';

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
    deliveryLog: assembleDeliveryLog(dto),
  };
}

function assembleDeliveryLog(dto: RelaygramConfigDto): DeliveryLogConfig {
  const log = isMapping(dto.delivery_log) ? dto.delivery_log : undefined;
  const maxAge = log?.max_age === undefined ? undefined : parseDuration(log.max_age);
  return {
    enabled: log?.enabled ?? DELIVERY_LOG_DEFAULTS.enabled,
    attemptsPerRoute: log?.attempts_per_route ?? DELIVERY_LOG_DEFAULTS.attemptsPerRoute,
    updatesPerBot: log?.updates_per_bot ?? DELIVERY_LOG_DEFAULTS.updatesPerBot,
    maxAgeMs: maxAge ?? DELIVERY_LOG_DEFAULTS.maxAgeMs,
  };
}

function assembleRedis(dto: RelaygramConfigDto, ctx: AssemblyContext): RedisConfig {
  const override = envOverride(ctx, 'REDIS_URL', redisUrlProblem, 'redis.url');
  const redis = isMapping(dto.redis) ? dto.redis : undefined;
  const url = override ?? redis?.url ?? DEFAULTS.redisUrl;
  const waitReplicas = redis?.wait_replicas ?? DEFAULTS.redisWaitReplicas;
  return {
    url,
    prefix: redis?.prefix ?? DEFAULTS.redisPrefix,
    waitReplicas,
    waitTimeoutMs: parseDuration(redis?.wait_timeout ?? DEFAULTS.redisWaitTimeout) as number,
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
      broadcast: dto.broadcast ?? false,
    });
  }
  return clients;
}
