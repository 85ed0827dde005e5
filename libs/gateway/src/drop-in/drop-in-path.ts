/** What a drop-in path (`/bot<id>:<token>/...` after `/bot`) asks for. */
export type DropInTarget =
  | { kind: 'method'; numericId: string; token: string; method: string }
  | { kind: 'file'; numericId: string; token: string; filePath: string }
  /** `/bot<token>/test/<method>`: Telegram's test environment, not served here. */
  | { kind: 'test-environment'; numericId: string; token: string }
  | { kind: 'not-found'; numericId: string; token: string }
  /** Not `<digits>:<token>`: no token at all, as Telegram sees it. */
  | { kind: 'malformed' };

const CREDENTIAL = /^(\d{1,20}):([^/]+)$/;
const TEST_ENVIRONMENT = /^test(?:\/|$)/i;

/** `rest` is what follows `/bot` (method routes) or `/file/bot` (downloads). */
export function parseDropInPath(rest: string, route: 'method' | 'file'): DropInTarget {
  const slash = rest.indexOf('/');
  const credential = CREDENTIAL.exec(slash === -1 ? rest : rest.slice(0, slash));
  if (!credential) return { kind: 'malformed' };
  const numericId = credential[1] as string;
  const token = credential[2] as string;
  const remainder = slash === -1 ? '' : rest.slice(slash + 1);
  if (route === 'file') {
    return remainder === ''
      ? { kind: 'not-found', numericId, token }
      : { kind: 'file', numericId, token, filePath: remainder };
  }
  if (TEST_ENVIRONMENT.test(remainder)) return { kind: 'test-environment', numericId, token };
  if (remainder === '' || remainder.includes('/')) return { kind: 'not-found', numericId, token };
  return { kind: 'method', numericId, token, method: remainder };
}

/** The path as logs show it: the bot's public id, never the token. */
export function loggedPath(numericId: string, rest: string): string {
  return `/bot${numericId}:***/${rest}`;
}
