import { displayUrl } from '../logging/logger';

/** A delivery error newer than this, with updates still pending, makes a webhook bot unhealthy. */
export const WEBHOOK_ERROR_WINDOW_MS = 5 * 60_000;

/**
 * What is wrong with a webhook according to Telegram's getWebhookInfo (SPEC section 3):
 * a URL other than the configured one, or a recent delivery error while updates wait
 * (a 301 from an old URL shows up here). Undefined when nothing is.
 */
export function webhookProblem(
  info: Record<string, unknown>,
  expectedUrl: string,
  now = Date.now(),
): string | undefined {
  // Compared as shown: a feature may report the URL already made fit to show.
  const url = typeof info.url === 'string' ? displayUrl(info.url) : undefined;
  const expected = displayUrl(expectedUrl);
  if (url !== undefined && url !== expected) {
    return url === ''
      ? `no webhook is set at Telegram, not the configured ${expected}`
      : `Telegram sends updates to ${url}, not to the configured ${expected}`;
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
