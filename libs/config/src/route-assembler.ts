import type {
  BotConfig,
  PullRouteConfig,
  RetryConfig,
  RouteConfig,
  RouteMatch,
} from './config.types';
import {
  claimName,
  durationMs,
  FirstSeen,
  knownBots,
  listOf,
  lowerCase,
  unique,
  type AssemblyContext,
  type Entry,
} from './assembly-context';
import { assemblePullRoute, type PullRouteEntry } from './pull-route-assembler';
import { DEFAULTS } from './schema/config-defaults';
import { isMapping } from './schema/config-rules';
import type { RetryDto, RouteDto, RouteMatchDto } from './schema/route.dto';
import { serviceTokenRule, signingSecretRule, telegramSecretTokenRule } from './secret-rules';
import type { PathSegment } from './yaml-path';

/**
 * The routes with their defaults and secrets, each checked against the bots it names.
 * A pull route is set aside in `pulls`: its clients are checked once they are known.
 */
export function assembleRoutes(
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
