/** A JSON object as received: any key may hold any JSON value, or be missing. */
export type JsonObject = { readonly [key: string]: unknown };

/** The value as an object, or undefined for null, arrays and primitives. */
export function asObject(value: unknown): JsonObject | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as JsonObject)
    : undefined;
}

/**
 * Telegram ids (users, chats) are integers that may be negative and need up to 52 bits;
 * anything that is not a safe integer is not an id we can compare or put in a lane id.
 */
export function asId(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) ? value : undefined;
}

/** A path of keys, the last one naming the id: `['message', 'chat', 'id']`. */
export type IdPath = readonly string[];

/** The id at the end of `path`, or undefined when any step is missing or of the wrong shape. */
export function idAt(root: JsonObject, path: IdPath): number | undefined {
  let node: JsonObject | undefined = root;
  const last = path.length - 1;
  for (let i = 0; i < last && node !== undefined; i++) node = asObject(node[path[i]]);
  return node === undefined ? undefined : asId(node[path[last]]);
}

/** The first id found along `paths`, tried in order. */
export function firstIdAt(root: JsonObject, paths: readonly IdPath[]): number | undefined {
  for (let i = 0; i < paths.length; i++) {
    const id = idAt(root, paths[i]);
    if (id !== undefined) return id;
  }
  return undefined;
}
