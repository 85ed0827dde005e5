import type { BotConfig } from './config.types';
import { parseDuration } from './duration';
import type { EnvSecrets } from './env-secrets';
import type { ProblemList } from './problem-list';
import { isMapping, NAME } from './schema/config-rules';
import { Secret } from './secret';
import { formatPath, type PathSegment } from './yaml-path';

// Stands in for a secret that failed to resolve; that failure is a problem, so a config
// holding it is never handed out.
export const UNRESOLVED = new Secret('');

/** What every assembly step shares: overrides, secrets, and the lists they report to. */
export interface AssemblyContext {
  readonly env: NodeJS.ProcessEnv;
  readonly secrets: EnvSecrets;
  readonly problems: ProblemList;
  readonly warnings: ProblemList;
}

/** The listed bot ids that exist; each one that does not is a problem at its index. */
export function knownBots(
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

export function claimName(
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
export class FirstSeen {
  private readonly seen = new Map<string, readonly PathSegment[]>();

  /** The earlier path holding this key, or undefined after recording this one as the first. */
  claim(key: string, path: readonly PathSegment[]): readonly PathSegment[] | undefined {
    const earlier = this.seen.get(key);
    if (earlier) return earlier;
    this.seen.set(key, path);
    return undefined;
  }
}

export interface Entry<T> {
  readonly dto: T;
  readonly path: readonly PathSegment[];
}

/** The mapping items of a top-level list, with their paths; other items were reported. */
export function entries<T extends object>(
  section: string,
  list: readonly T[] | undefined,
): Entry<T>[] {
  if (!Array.isArray(list)) return [];
  return list.flatMap((dto, index) => (isMapping(dto) ? [{ dto, path: [section, index] }] : []));
}

export function durationMs(value: string | number | undefined, fallback: string): number {
  return parseDuration(value ?? fallback) ?? 0;
}

/** The list a key holds, or undefined when it holds something else (reported elsewhere). */
export function listOf<T>(value: readonly T[] | undefined): readonly T[] | undefined {
  return Array.isArray(value) ? value : undefined;
}

export function unique<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}

export function lowerCase(values: readonly string[]): string[] {
  return values.map((value) => (typeof value === 'string' ? value.toLowerCase() : value));
}
