/**
 * Checks shared by the YAML field rules and the environment overrides. Each returns the
 * problem (phrased to follow `<path>: `) or undefined; none ever repeats the value.
 */

export const HTTP_URL_RULE = 'must be an http or https URL';
export { REDIS_URL_RULE, redisUrlProblem } from '../redis-url';

/** `credentialsHint` says where credentials belong instead, for URLs that have such a place. */
export function httpUrlProblem(value: unknown, credentialsHint?: string): string | undefined {
  const url = strictUrl(value, /^https?:\/\//i);
  if (!url || !url.hostname) return HTTP_URL_RULE;
  if (url.username || url.password) {
    const base = 'must not contain a user name or password';
    return credentialsHint ? `${base}; ${credentialsHint}` : base;
  }
  return undefined;
}

/** WHATWG URL parsing forgives a lot (`http:host`, surrounding spaces); a config should not. */
function strictUrl(value: unknown, scheme: RegExp): URL | undefined {
  if (typeof value !== 'string' || !scheme.test(value) || /\s/.test(value)) return undefined;
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}
