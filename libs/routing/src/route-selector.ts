import type { RelaygramConfig, RouteConfig } from '@relaygram/config';
import { compileMatch, matchesFacts, type CompiledMatch } from './route-matcher';
import { UpdateFacts } from './update-facts';
import type { Update } from './update.types';

export interface SelectRoutesOptions {
  /** The username learned from getMe; overrides `bots[].username` from the config. */
  readonly botUsername?: string;
}

interface CompiledRoute {
  readonly route: RouteConfig;
  readonly match: CompiledMatch;
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
  for (const route of config.routes) {
    const compiled: CompiledRoute = { route, match: compileMatch(route.match) };
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
 * The routes that take this update from this bot, in config order (SPEC section 4):
 * every route listing the bot whose match holds. Several routes may match (fan-out);
 * none is a valid answer (the update is ignored).
 */
export function selectRoutes(
  config: RelaygramConfig,
  botId: string,
  update: Update,
  options?: SelectRoutesOptions,
): RouteConfig[] {
  const bot = routesByBot(config).get(botId) ?? NO_ROUTES;
  const selected: RouteConfig[] = [];
  let facts: UpdateFacts | undefined;
  for (const { route, match } of bot.routes) {
    if (match.all) {
      selected.push(route);
      continue;
    }
    facts ??= new UpdateFacts(update, options?.botUsername || bot.username);
    if (matchesFacts(match, facts)) selected.push(route);
  }
  return selected;
}
