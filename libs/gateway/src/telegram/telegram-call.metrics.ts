import type { RelaygramMetrics } from '@relaygram/observability';
import type { TelegramCallEvent } from '@relaygram/telegram';

// Method names come from clients: past this many distinct ones, new names share a label.
const MAX_METHOD_LABELS = 200;
const NOT_FOUND = 404;

/**
 * Counts every Bot API call the gateway makes. Labels are the bot's config id, the
 * method and the result code; a method Telegram does not know (404) is labelled
 * `unknown`, so a client cannot grow the label set with made-up names.
 */
export function telegramCallRecorder(
  metrics: RelaygramMetrics,
): (event: TelegramCallEvent) => void {
  const methods = new Set<string>();
  const methodLabel = (event: TelegramCallEvent): string => {
    if (event.errorCode === NOT_FOUND) return 'unknown';
    if (methods.has(event.method)) return event.method;
    if (methods.size >= MAX_METHOD_LABELS) return 'other';
    methods.add(event.method);
    return event.method;
  };
  return (event) => {
    const labels = {
      bot: event.botId ?? 'unknown',
      method: methodLabel(event),
      code: String(event.ok ? 200 : (event.errorCode ?? 0)),
    };
    metrics.telegramCalls.inc(labels);
    if (!event.ok) metrics.telegramErrors.inc(labels);
  };
}
