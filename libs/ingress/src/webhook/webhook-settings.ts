import { createHash } from 'node:crypto';
import type { BotConfig, Secret } from '@relaygram/config';
import { safeEqual } from '@relaygram/signing';

/** Telegram's getWebhookInfo answer. */
export interface WebhookInfo {
  url: string;
  has_custom_certificate: boolean;
  pending_update_count: number;
  ip_address?: string;
  last_error_date?: number;
  last_error_message?: string;
  last_synchronization_error_date?: number;
  max_connections?: number;
  allowed_updates?: string[];
}

/**
 * The setWebhook parameters of a webhook bot, from its config alone: what ingress sends
 * at start and `relaygram webhook set` sends by hand. The secret is always sent
 * (getWebhookInfo cannot show it, so a rotated one is otherwise never applied), and
 * pending updates are never dropped.
 */
export function setWebhookParams(bot: BotConfig): Record<string, unknown> {
  if (bot.mode !== 'webhook' || !bot.webhook) {
    throw new Error(`bot ${bot.id} is not in webhook mode`);
  }
  return {
    url: bot.webhook.url,
    secret_token: bot.webhook.secretToken.reveal(),
    allowed_updates: [...bot.allowedUpdates],
    max_connections: bot.webhook.maxConnections,
    drop_pending_updates: false,
  };
}

/**
 * Identifies what setWebhook would send (token included), for the lock that keeps
 * replicas from sending the same settings at once. A digest, so the secret is not
 * stored in Redis.
 */
export function webhookSettingsFingerprint(bot: BotConfig): string {
  return createHash('sha256')
    .update(JSON.stringify([bot.token.reveal(), setWebhookParams(bot)]))
    .digest('base64url');
}

/** Two optional secrets are the same: both absent, or equal by the one digest comparison. */
function sameSecret(a: Secret | undefined, b: Secret | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return safeEqual(a.reveal(), b.reveal());
}

/** Whether two configs of a bot need setWebhook called again. */
export function webhookSettingsChanged(a: BotConfig, b: BotConfig): boolean {
  return (
    a.mode !== b.mode ||
    !safeEqual(a.token.reveal(), b.token.reveal()) ||
    a.webhook?.url !== b.webhook?.url ||
    !sameSecret(a.webhook?.secretToken, b.webhook?.secretToken) ||
    a.webhook?.maxConnections !== b.webhook?.maxConnections ||
    a.webhook?.manage !== b.webhook?.manage ||
    a.allowedUpdates.join(',') !== b.allowedUpdates.join(',')
  );
}
