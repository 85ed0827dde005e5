import type { BotConfig } from '@relaygram/config';
import { BotStateField, isPollerState } from '@relaygram/contracts';
import {
  displayUrl,
  webhookProblem,
  WEBHOOK_ERROR_WINDOW_MS,
  type BotHealth,
} from '@relaygram/observability';
import type { WebhookInfo } from '../webhook/webhook-settings';

export type StoredBotState = Readonly<Record<string, string | undefined>>;

export interface WebhookAssessment {
  healthy: boolean;
  problem?: string;
}

/**
 * Reads getWebhookInfo as SPEC section 3 says, with the one rule every process uses
 * (`webhookProblem`): a URL other than the configured one, or an error within 5 min
 * while updates are pending, makes the bot unhealthy. When the URL is wrong and
 * Telegram also reports a recent error (a 301 from an old URL), the error is added:
 * it is what the operator searches logs for.
 */
export function assessWebhookInfo(
  info: WebhookInfo,
  configuredUrl: string,
  now: number,
): WebhookAssessment {
  const problem = webhookProblem({ ...info }, configuredUrl, now);
  if (problem === undefined) return { healthy: true };
  const lastError = info.last_error_message;
  const recent =
    info.last_error_date !== undefined &&
    now - info.last_error_date * 1000 < WEBHOOK_ERROR_WINDOW_MS &&
    (info.pending_update_count ?? 0) > 0;
  if (recent && lastError !== undefined && !problem.includes(lastError)) {
    return { healthy: false, problem: `${problem}; last error: ${lastError}` };
  }
  return { healthy: false, problem };
}

/** The webhook part of a bot's /healthz entry: Telegram's fields, the URL made fit to show. */
export function webhookView(
  info: WebhookInfo,
  checkedAt: number | undefined,
): Record<string, unknown> {
  const view: Record<string, unknown> = {
    url: displayUrl(info.url),
    pending_update_count: info.pending_update_count,
  };
  if (info.last_error_date !== undefined) view.last_error_date = info.last_error_date;
  if (info.last_error_message !== undefined) view.last_error_message = info.last_error_message;
  if (info.max_connections !== undefined) view.max_connections = info.max_connections;
  if (info.allowed_updates !== undefined) view.allowed_updates = info.allowed_updates;
  if (info.ip_address !== undefined) view.ip_address = info.ip_address;
  if (checkedAt !== undefined) view.checked_at = new Date(checkedAt).toISOString();
  return view;
}

function parseInfo(raw: string | undefined): WebhookInfo | undefined {
  if (!raw) return undefined;
  try {
    const value = JSON.parse(raw) as WebhookInfo;
    return typeof value === 'object' && value !== null && typeof value.url === 'string'
      ? value
      : undefined;
  } catch {
    return undefined;
  }
}

function time(raw: string | undefined): number | undefined {
  const value = raw === undefined ? NaN : Number(raw);
  return Number.isFinite(value) ? value : undefined;
}

/** A webhook bot's /healthz entry from the state the watching replica stored. */
export function webhookBotHealth(bot: BotConfig, stored: StoredBotState, now: number): BotHealth {
  const health: BotHealth = { id: bot.id, mode: 'webhook', polling: false, healthy: true };
  if (!bot.webhook?.manage) {
    health.webhook = { manage: false };
    return health;
  }
  const info = parseInfo(stored[BotStateField.WebhookInfo]);
  const problems: string[] = [];
  const setError = stored[BotStateField.WebhookSetError];
  const infoError = stored[BotStateField.WebhookInfoError];
  if (setError) problems.push(setError);
  if (infoError) problems.push(infoError);
  if (info) {
    const assessment = assessWebhookInfo(info, bot.webhook.url, now);
    if (assessment.problem) problems.push(assessment.problem);
    health.webhook = webhookView(info, time(stored[BotStateField.WebhookInfoAt]));
  }
  if (problems.length) {
    health.healthy = false;
    health.problem = problems.join('; ');
  }
  return health;
}

/** A polling bot's /healthz entry: the lease holder's published state, whichever replica it is. */
export function pollingBotHealth(
  bot: BotConfig,
  stored: StoredBotState,
  leaseHeld: boolean,
): BotHealth {
  const health: BotHealth = { id: bot.id, mode: 'polling', polling: leaseHeld, healthy: false };
  const state = stored[BotStateField.PollerState];
  const since = time(stored[BotStateField.PollerSince]);
  if (!leaseHeld) {
    health.state = 'stopped';
    health.problem = 'no replica polls this bot (the poller lease is free)';
    return health;
  }
  health.state = isPollerState(state) ? state : 'polling';
  if (since !== undefined) health.since = new Date(since).toISOString();
  health.healthy = health.state === 'polling';
  const problem = stored[BotStateField.PollerProblem];
  if (problem) health.problem = problem;
  return health;
}
