import { displayUrl } from '../logging/logger';

/** A delivery error newer than this, with updates still pending, makes a webhook bot unhealthy. */
export const WEBHOOK_ERROR_WINDOW_MS = 5 * 60_000;

/**
 * What is wrong with a webhook according to Telegram's getWebhookInfo (SPEC section 3):
 * a URL other than the configured one, or a recent delivery error while updates wait
 * (a 301 from an old URL shows up here). Undefined when nothing is.
 */
/**
 * The whole URL counts, query included: Telegram calling the right path with another
 * query (an old key, a missing parameter) is drift. A reporter that already made the
 * URL fit to show (a process's /healthz, read by another) can only be compared as shown.
 */
function sameUrl(reported: string, configured: string): boolean {
  if (isShown(reported)) return displayUrl(reported) === displayUrl(configured);
  return normalized(reported) === normalized(configured);
}

function isShown(url: string): boolean {
  return url.includes('?…') || url.includes(':***');
}

function normalized(url: string): string {
  try {
    return new URL(url).href;
  } catch {
    return url;
  }
}

export function webhookProblem(
  info: Record<string, unknown>,
  expectedUrl: string,
  now = Date.now(),
): string | undefined {
  const reported = typeof info.url === 'string' ? info.url : undefined;
  const expected = displayUrl(expectedUrl);
  if (reported !== undefined && !sameUrl(reported, expectedUrl)) {
    const url = displayUrl(reported);
    if (url === '') return `no webhook is set at Telegram, not the configured ${expected}`;
    // Shown alike, the two differ in what is hidden (the query, or a token in the path).
    const hidden = url === expected ? ' (they differ in the part not shown)' : '';
    return `Telegram sends updates to ${url}, not to the configured ${expected}${hidden}`;
  }
  const errorDate = typeof info.last_error_date === 'number' ? info.last_error_date : undefined;
  const pending = typeof info.pending_update_count === 'number' ? info.pending_update_count : 0;
  if (errorDate !== undefined && pending > 0 && now - errorDate * 1000 < WEBHOOK_ERROR_WINDOW_MS) {
    const message =
      typeof info.last_error_message === 'string' ? info.last_error_message : 'delivery failed';
    return `Telegram cannot deliver (${pending} pending): ${message}`;
  }
  return undefined;
}
