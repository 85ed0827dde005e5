import type { EnqueueResult } from '@relaygram/queue';

/**
 * The webhook adapter's answers, serialised once. Telegram reads only the status; the
 * bodies say what happened to whoever reads logs or curls the endpoint.
 */
export const WEBHOOK_REPLIES = Object.freeze({
  /** Same body for an unknown bot and a polling one: the path does not tell them apart. */
  notFound: '{"error":"not found: no bot in webhook mode has this id"}',
  secretMissing: '{"error":"X-Telegram-Bot-Api-Secret-Token header is missing"}',
  secretWrong:
    '{"error":"X-Telegram-Bot-Api-Secret-Token does not match the webhook secret of this bot"}',
  tooLarge: '{"error":"body exceeds 1 MiB"}',
  badContentType: '{"error":"body is not JSON: the Content-Type header is malformed"}',
  redisUnreachable:
    '{"error":"Redis is unreachable: the update was not stored (Telegram retries)"}',
  redisTimedOut:
    '{"error":"Redis did not answer in time: the update may not be stored (Telegram retries)"}',
  redisFailed: '{"error":"Redis answered an error: the update was not stored (Telegram retries)"}',
  notReplicated:
    '{"error":"Redis replicas did not confirm the update in time: stored on the primary only (Telegram retries)"}',
  internal: '{"error":"internal error"}',
  duplicate: '{"status":"duplicate","deliveries":0}',
  ignored: '{"status":"ignored","deliveries":0}',
});

export function badRequestReply(problem: string): string {
  return JSON.stringify({ error: problem });
}

export function acceptedReply(result: EnqueueResult): string {
  switch (result.status) {
    case 'queued':
      return `{"status":"queued","deliveries":${result.deliveries}}`;
    case 'duplicate':
      return WEBHOOK_REPLIES.duplicate;
    case 'ignored':
      return WEBHOOK_REPLIES.ignored;
  }
}
