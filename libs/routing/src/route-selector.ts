import type { PullRouteConfig, RelaygramConfig, RouteConfig } from '@relaygram/config';
import { compileMatch, matchesFacts, type CompiledMatch } from './route-matcher';
import { UpdateFacts } from './update-facts';
import type { Update } from './update.types';

export interface SelectRoutesOptions {
  /** The username learned from getMe; overrides `bots[].username` from the config. */
  readonly botUsername?: string;
}

/** A push route (delivered by the dispatcher) or a pull route (taken with getUpdates). */
export type AnyRoute = RouteConfig | PullRouteConfig;

export function isPullRoute(route: AnyRoute): route is PullRouteConfig {
  return 'pull' in route;
}

interface CompiledRoute {
  readonly route: AnyRoute;
  readonly match: CompiledMatch;
  readonly pull: boolean;
}

interface BotRoutes {
  readonly username: string | undefined;
  /** This bot's routes, in config order. */
  readonly routes: readonly CompiledRoute[];
}

const NO_ROUTES: BotRoutes = Object.freeze({ username: undefined, routes: [] });

// One entry per loaded config: a reload makes a new frozen object, and the old entry
// goes with the old config.
const byConfig = new WeakMap<RelaygramConfig, ReadonlyMap<string, BotRoutes>>();

function routesByBot(config: RelaygramConfig): ReadonlyMap<string, BotRoutes> {
  let result = byConfig.get(config);
  if (result === undefined) {
    result = compile(config);
    byConfig.set(config, result);
  }
  return result;
}

function compile(config: RelaygramConfig): ReadonlyMap<string, BotRoutes> {
  const routes = new Map<string, CompiledRoute[]>();
  const all: readonly AnyRoute[] = [...config.routes, ...(config.pullRoutes ?? [])];
  for (const route of all) {
    const compiled: CompiledRoute = {
      route,
      match: compileMatch(route.match),
      pull: isPullRoute(route),
    };
    for (const botId of route.bots) {
      const list = routes.get(botId);
      if (list === undefined) routes.set(botId, [compiled]);
      else if (list[list.length - 1] !== compiled) list.push(compiled);
    }
  }
  const result = new Map<string, BotRoutes>();
  for (const [botId, list] of routes) {
    const username = config.bots.find((bot) => bot.id === botId)?.username || undefined;
    result.set(botId, { username, routes: list });
  }
  return result;
}

/**
 * The push routes that take this update from this bot, in config order (SPEC section
 * 4): every route listing the bot whose match holds. Several routes may match
 * (fan-out); none is a valid answer (the update is ignored).
 */
export function selectRoutes(
  config: RelaygramConfig,
  botId: string,
  update: Update,
  options?: SelectRoutesOptions,
): RouteConfig[] {
  return select(config, botId, update, options, false) as RouteConfig[];
}

/**
 * Push and pull routes that take this update (push routes first, each kind in config
 * order): what ingress enqueues a delivery for.
 */
export function selectAllRoutes(
  config: RelaygramConfig,
  botId: string,
  update: Update,
  options?: SelectRoutesOptions,
): AnyRoute[] {
  return select(config, botId, update, options, true);
}

function select(
  config: RelaygramConfig,
  botId: string,
  update: Update,
  options: SelectRoutesOptions | undefined,
  withPull: boolean,
): AnyRoute[] {
  const bot = routesByBot(config).get(botId) ?? NO_ROUTES;
  const selected: AnyRoute[] = [];
  let facts: UpdateFacts | undefined;
  for (const { route, match, pull } of bot.routes) {
    if (pull && !withPull) continue;
    if (match.all) {
      selected.push(route);
      continue;
    }
    facts ??= new UpdateFacts(update, options?.botUsername || bot.username);
    if (matchesFacts(match, facts)) selected.push(route);
  }
  return selected;
}
