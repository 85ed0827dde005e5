import { RESERVED_METHODS } from '@relaygram/config';

const RESERVED = new Set(RESERVED_METHODS);

/**
 * getUpdates, setWebhook, deleteWebhook, logOut and close would steal or drop the
 * update stream or take the bot off the server; Telegram matches method names
 * case-insensitively, so the refusal does too.
 */
export function isReservedMethod(method: string): boolean {
  return RESERVED.has(method.toLowerCase());
}

/**
 * Telegram reads a `method` parameter as the method to call (the way webhook replies
 * name theirs), so a body or query carrying one could run a method other than the one
 * the path names and the checks were made for. One naming the path's own method
 * changes nothing, and Telegraf sends exactly that with every upload.
 */
export function isMethodParameter(name: string): boolean {
  return name.length === 6 && name.toLowerCase() === 'method';
}

/** Whether a `method` parameter with this value would make Telegram call another method. */
export function redirectsMethod(value: unknown, pathMethod: string): boolean {
  return typeof value !== 'string' || value.toLowerCase() !== pathMethod.toLowerCase();
}

/** Any `method` parameter among the entries that names another method than the path's. */
export function hasRedirectingMethod(
  entries: Iterable<readonly [string, unknown]>,
  pathMethod: string,
): boolean {
  for (const [name, value] of entries) {
    if (isMethodParameter(name) && redirectsMethod(value, pathMethod)) return true;
  }
  return false;
}

/** The same for a raw query string (`a=1&method=x`), encoded or not. */
export function queryRedirectsMethod(query: string, pathMethod: string): boolean {
  if (query === '') return false;
  return hasRedirectingMethod(new URLSearchParams(query), pathMethod);
}
