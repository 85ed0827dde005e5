import { isUtf8 } from 'node:buffer';

/** A value a script takes in ARGV. */
export type ScriptArg = string | Buffer | number;

/** The arguments of ioredis's call of a script: the key count, KEYS, then ARGV. */
export type ScriptCall = [keyCount: number, ...keysThenArgs: ScriptArg[]];

/** KEYS and ARGV already encoded that a script's own come after (see `after`). */
export interface ScriptPrefix {
  keys: string[];
  args: ScriptArg[];
}

/** Values beyond a layout's named ones: per-delivery groups, field/value pairs. */
export interface ScriptTail {
  keys?: readonly string[];
  args?: readonly ScriptArg[];
}

/** The named values of one call: a string per key, a ScriptArg per argument. */
export type ScriptValues<K extends string, A extends string> = { readonly [P in K]: string } & {
  readonly [P in A]: ScriptArg;
};

/**
 * The KEYS and ARGV order of a script, named once: the Lua reads `K.name` (`KEYS[n]`) and
 * `A.name` (`ARGV[n]`), and its callers pass the same names to `encode`, so a position
 * lives in one place only.
 */
export interface ScriptLayout<K extends string, A extends string> {
  readonly K: { readonly [P in K]: string };
  readonly A: { readonly [P in A]: string };
  /** Named KEYS, the prefix's included. */
  readonly keyCount: number;
  /** Named ARGV, the prefix's included. */
  readonly argCount: number;
  /**
   * The call's arguments from named values. `prefix`: the encoded KEYS and ARGV of the
   * layout given as `after`, when there is one; `tail`: values after the named ones.
   */
  encode(values: ScriptValues<K, A>, prefix?: ScriptPrefix, tail?: ScriptTail): ScriptCall;
  /** The KEYS and ARGV of a layout that others come `after`, for their `encode`. */
  prefix(values: ScriptValues<K, A>): ScriptPrefix;
}

interface Counts {
  keyCount: number;
  argCount: number;
}

export function scriptLayout<const K extends string, const A extends string>(spec: {
  /** The layout whose KEYS and ARGV come first (the route's or a pull lane's). */
  after?: Counts;
  keys: readonly K[];
  args: readonly A[];
}): ScriptLayout<K, A> {
  const keyBase = spec.after?.keyCount ?? 0;
  const argBase = spec.after?.argCount ?? 0;
  const K = {} as Record<K, string>;
  spec.keys.forEach((name, i) => (K[name] = `KEYS[${keyBase + i + 1}]`));
  const A = {} as Record<A, string>;
  spec.args.forEach((name, i) => (A[name] = `ARGV[${argBase + i + 1}]`));
  const keyCount = keyBase + spec.keys.length;
  return {
    K,
    A,
    keyCount,
    argCount: argBase + spec.args.length,
    encode(values, prefix, tail) {
      const out: ScriptCall = [keyCount + (tail?.keys?.length ?? 0)];
      if (prefix) for (const key of prefix.keys) out.push(key);
      for (const name of spec.keys) out.push(values[name]);
      if (tail?.keys) for (const key of tail.keys) out.push(key);
      if (prefix) for (const arg of prefix.args) out.push(wireArg(arg));
      for (const name of spec.args) out.push(wireArg(values[name]));
      if (tail?.args) for (const arg of tail.args) out.push(wireArg(arg));
      return out;
    },
    prefix(values) {
      return {
        keys: spec.keys.map((name) => values[name]),
        args: spec.args.map((name) => values[name]),
      };
    },
  };
}

/**
 * A Buffer of valid UTF-8 goes to Redis as the string it decodes to: the same bytes on
 * the wire, but one Buffer among a call's arguments sends ioredis's whole command through
 * its slower mixed-buffers path (about twice the client CPU for a lane script's fifty
 * arguments, tools/bench/README.md). Anything else (an answer's bytes cut mid-character,
 * binary) stays a Buffer.
 */
export function wireArg(arg: ScriptArg): ScriptArg {
  return Buffer.isBuffer(arg) && isUtf8(arg) ? arg.toString('utf8') : arg;
}

/** A reply value as text (scripts called through `...Buffer` commands answer Buffers). */
export function text(value: unknown): string {
  return Buffer.isBuffer(value) ? value.toString('utf8') : String(value);
}
