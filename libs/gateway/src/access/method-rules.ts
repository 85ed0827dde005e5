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
 * name theirs), so a body carrying one could run a method other than the one the path
 * names and checks were made for.
 */
export function isMethodParameter(name: string): boolean {
  return name.length === 6 && name.toLowerCase() === 'method';
}

export function hasMethodParameter(names: Iterable<string>): boolean {
  for (const name of names) if (isMethodParameter(name)) return true;
  return false;
}

/** `method` in a raw query string (`a=1&method=x`), encoded or not. */
export function queryHasMethodParameter(query: string): boolean {
  if (query === '') return false;
  return hasMethodParameter(new URLSearchParams(query).keys());
}
