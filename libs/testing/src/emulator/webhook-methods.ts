import type { BotState } from './bot-state';
import type { WebhookInfo } from './emulator.types';
import { DescribedResult, type MethodCall, type MethodTable } from './method-call';
import { badRequest, conflict, TERMINATED_BY_SET_WEBHOOK } from './telegram-error';
import { boolParam, intParam, stringParam } from './telegram-params';
import { describeAllowedUpdates, parseAllowedUpdates } from './update-types';
import { WebhookPusher } from './webhook-pusher';

const DEFAULT_MAX_CONNECTIONS = 40;
const SECRET_TOKEN = /^[A-Za-z0-9_-]+$/;

/**
 * setWebhook after the Bot API server: an empty url deletes the webhook; the same settings
 * again change nothing (errors stay recorded: "Webhook is already set"); anything else ends a
 * waiting getUpdates, resets the recorded error and starts pushing pending updates. Unlike
 * Telegram, http URLs and any port are accepted so tests can point it at a local receiver.
 */
function setWebhook(call: MethodCall): DescribedResult {
  const { bot, params, ctx } = call;
  const rawUrl = (stringParam(params, 'url') ?? '').trim();
  if (rawUrl === '') return removeWebhook(call);

  const url = parseWebhookUrl(rawUrl);
  const secretToken = stringParam(params, 'secret_token') || undefined;
  if (secretToken !== undefined) {
    if (secretToken.length > 256) throw badRequest('secret token is too long');
    if (!SECRET_TOKEN.test(secretToken)) {
      throw badRequest('secret token contains unallowed characters');
    }
  }
  const maxConnections = Math.min(
    100,
    Math.max(1, intParam(params, 'max_connections') ?? DEFAULT_MAX_CONNECTIONS),
  );
  const drop = boolParam(params, 'drop_pending_updates');
  const allowed = parseAllowedUpdates(params['allowed_updates']);

  const current = bot.webhook;
  if (
    !drop &&
    current?.url === url &&
    current.maxConnections === maxConnections &&
    current.secretToken === secretToken
  ) {
    if (allowed) bot.allowedUpdates = allowed;
    return new DescribedResult(true, 'Webhook is already set');
  }

  bot.endPoll(conflict(TERMINATED_BY_SET_WEBHOOK));
  bot.pusher?.stop();
  if (drop) bot.queue.clear();
  if (allowed) bot.allowedUpdates = allowed;
  bot.webhook = { url, secretToken, maxConnections };
  bot.webhookError = undefined;
  bot.webhookIp = undefined;
  bot.pusher = new WebhookPusher(bot, bot.webhook, ctx.webhook, (method, replyParams) =>
    ctx.runWebhookReply(bot, method, replyParams),
  );
  bot.pusher.start();
  return new DescribedResult(true, 'Webhook was set');
}

function deleteWebhook(call: MethodCall): DescribedResult {
  return removeWebhook(call);
}

/** Pending updates survive unless drop_pending_updates is true. */
function removeWebhook({ bot, params }: MethodCall): DescribedResult {
  if (boolParam(params, 'drop_pending_updates')) bot.queue.clear();
  if (!bot.webhook) return new DescribedResult(true, 'Webhook is already deleted');
  stopWebhook(bot);
  return new DescribedResult(true, 'Webhook was deleted');
}

export function stopWebhook(bot: BotState): void {
  bot.pusher?.stop();
  bot.pusher = undefined;
  bot.webhook = undefined;
  bot.webhookError = undefined;
  bot.webhookIp = undefined;
}

export function webhookInfo(bot: BotState): WebhookInfo {
  const info: WebhookInfo = {
    url: bot.webhook?.url ?? '',
    has_custom_certificate: false,
    pending_update_count: bot.queue.size,
  };
  if (bot.webhook && bot.webhookIp) info.ip_address = bot.webhookIp;
  if (bot.webhookError) {
    info.last_error_date = bot.webhookError.date;
    info.last_error_message = bot.webhookError.message;
  }
  if (bot.webhook) info.max_connections = bot.webhook.maxConnections;
  const allowed = describeAllowedUpdates(bot.allowedUpdates);
  if (allowed) info.allowed_updates = allowed;
  return info;
}

/** Like the Bot API server, a URL without a scheme is taken as https. */
function parseWebhookUrl(raw: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `https://${raw}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw badRequest('invalid webhook URL specified');
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.hostname === '') {
    throw badRequest('invalid webhook URL specified');
  }
  return raw === withScheme ? raw : url.toString();
}

export const webhookMethods: MethodTable = {
  setWebhook,
  deleteWebhook,
  getWebhookInfo: ({ bot }) => webhookInfo(bot),
};
