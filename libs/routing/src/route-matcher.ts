import type { RouteMatch } from '@relaygram/config';
import { UpdateFacts } from './update-facts';
import type { Update } from './update.types';

export interface MatchContext {
  /** This bot's username, for `/cmd@username`; only bare commands match without it. */
  readonly botUsername?: string;
}

/**
 * A RouteMatch made ready for matching. A field that is absent asks nothing; a field
 * that is present asks for one of its values, so a present but empty list matches no
 * update: an allow-list emptied by an edit must close the route, not open it to all.
 */
export interface CompiledMatch {
  /** No field present: every update matches, whatever its type. */
  readonly all: boolean;
  readonly updateTypes?: ReadonlySet<string>;
  readonly userIds?: ReadonlySet<number>;
  readonly chatIds?: ReadonlySet<number>;
  readonly commands?: ReadonlySet<string>;
  readonly callbackPrefixes?: readonly string[];
}

const MATCH_ALL: CompiledMatch = Object.freeze({ all: true });

// Config objects are frozen once loaded, so a compiled match stays valid for as long as
// its RouteMatch lives; a reload brings new objects and new entries.
const compiled = new WeakMap<RouteMatch, CompiledMatch>();

export function compileMatch(match: RouteMatch | undefined): CompiledMatch {
  if (match === undefined || match === null) return MATCH_ALL;
  let result = compiled.get(match);
  if (result === undefined) {
    result = build(match);
    compiled.set(match, result);
  }
  return result;
}

function build(match: RouteMatch): CompiledMatch {
  const result: CompiledMatch = {
    all: false,
    updateTypes: match.updateTypes && new Set(match.updateTypes),
    userIds: match.userIds && new Set(match.userIds),
    chatIds: match.chatIds && new Set(match.chatIds),
    commands: match.commands && new Set(match.commands.map((c) => c.toLowerCase())),
    callbackPrefixes: match.callbackPrefixes && [...match.callbackPrefixes],
  };
  const all =
    !result.updateTypes &&
    !result.userIds &&
    !result.chatIds &&
    !result.commands &&
    !result.callbackPrefixes;
  return all ? MATCH_ALL : Object.freeze(result);
}

/**
 * SPEC section 4: every present field must hold (AND), by any one of its values (OR).
 * A field the update cannot answer (a chat on a poll, a command on a callback query,
 * anything but the type on a type this code does not know) does not hold.
 */
export function matchesFacts(match: CompiledMatch, facts: UpdateFacts): boolean {
  if (match.all) return true;
  const { updateTypes, userIds, chatIds, commands, callbackPrefixes } = match;
  if (updateTypes && (facts.type === undefined || !updateTypes.has(facts.type))) return false;
  if (callbackPrefixes && !startsWithAny(facts.callbackData, callbackPrefixes)) return false;
  if (userIds && !hasId(userIds, facts.actorId)) return false;
  if (chatIds && !hasId(chatIds, facts.chatId)) return false;
  if (commands) {
    const command = facts.command;
    if (command === undefined || !commands.has(command)) return false;
  }
  return true;
}

export function matches(
  match: RouteMatch | undefined,
  update: Update,
  ctx: MatchContext = {},
): boolean {
  const compiledMatch = compileMatch(match);
  return compiledMatch.all || matchesFacts(compiledMatch, new UpdateFacts(update, ctx.botUsername));
}

function hasId(ids: ReadonlySet<number>, id: number | undefined): boolean {
  return id !== undefined && ids.has(id);
}

function startsWithAny(data: string | undefined, prefixes: readonly string[]): boolean {
  if (data === undefined) return false;
  for (let i = 0; i < prefixes.length; i++) if (data.startsWith(prefixes[i])) return true;
  return false;
}
