import { Secret, type BotConfig } from '@relaygram/config';
import { assessWebhookInfo, pollingBotHealth, webhookBotHealth } from './bot-health-assessment';

const URL_OK = 'https://relay.example/webhooks/telegram/shop';
const NOW = 1_750_000_000_000;
const FIVE_MIN = 5 * 60_000;
const seconds = (ms: number) => Math.floor(ms / 1000);

function bot(mode: 'polling' | 'webhook', manage = true): BotConfig {
  return {
    id: 'shop',
    tokenEnv: 'T',
    token: new Secret('123456:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'),
    numericId: '123456',
    mode,
    allowedUpdates: ['message'],
    default: false,
    ...(mode === 'webhook'
      ? {
          webhook: {
            url: URL_OK,
            secretTokenEnv: 'S',
            secretToken: new Secret('s'),
            maxConnections: 40,
            manage,
            checkEveryMs: 60_000,
          },
        }
      : {}),
  };
}

describe('assessWebhookInfo', () => {
  const info = {
    url: URL_OK,
    has_custom_certificate: false,
    pending_update_count: 0,
  };

  it('is healthy when the URL is the configured one and no recent error holds updates back', () => {
    expect(assessWebhookInfo(info, URL_OK, NOW)).toEqual({ healthy: true });
    // An old error, or a recent one with nothing pending, is history.
    const old = {
      ...info,
      pending_update_count: 3,
      last_error_date: seconds(NOW - FIVE_MIN - 1000),
      last_error_message: 'Connection refused',
    };
    expect(assessWebhookInfo(old, URL_OK, NOW).healthy).toBe(true);
    const drained = { ...old, pending_update_count: 0, last_error_date: seconds(NOW - 1000) };
    expect(assessWebhookInfo(drained, URL_OK, NOW).healthy).toBe(true);
  });

  it('shows a recent error with pending updates', () => {
    const failing = {
      ...info,
      pending_update_count: 4,
      last_error_date: seconds(NOW - 60_000),
      last_error_message: 'Wrong response from the webhook: 301 Moved Permanently',
    };
    expect(assessWebhookInfo(failing, URL_OK, NOW)).toEqual({
      healthy: false,
      problem:
        'Telegram cannot deliver (4 pending): Wrong response from the webhook: 301 Moved Permanently',
    });
  });

  it('reports another URL, or none, with the last error when there is one', () => {
    const old = 'https://old.example/bot123456:AAbbCCddEEffGGhhIIjjKKllMMnn/hook';
    const drifted = {
      ...info,
      url: old,
      pending_update_count: 2,
      last_error_date: seconds(NOW - 10_000),
      last_error_message: 'Wrong response from the webhook: 301 Moved Permanently',
    };
    expect(assessWebhookInfo(drifted, URL_OK, NOW)).toEqual({
      healthy: false,
      problem: `Telegram sends updates to https://old.example/bot123456:***/hook, not to the configured ${URL_OK}; last error: Wrong response from the webhook: 301 Moved Permanently`,
    });
    expect(assessWebhookInfo({ ...info, url: '' }, URL_OK, NOW)).toEqual({
      healthy: false,
      problem: `no webhook is set at Telegram, not the configured ${URL_OK}`,
    });
  });
});

describe('webhookBotHealth', () => {
  it('reports setWebhook and getWebhookInfo failures, and shows the info', () => {
    const stored = {
      webhook_info: JSON.stringify({
        url: URL_OK,
        has_custom_certificate: false,
        pending_update_count: 1,
      }),
      webhook_info_at: String(NOW),
      webhook_set_error: 'setWebhook failed: ETELEGRAM: 400 Bad Request: bad webhook',
    };
    expect(webhookBotHealth(bot('webhook'), stored, NOW)).toEqual({
      id: 'shop',
      mode: 'webhook',
      polling: false,
      healthy: false,
      problem: 'setWebhook failed: ETELEGRAM: 400 Bad Request: bad webhook',
      webhook: {
        url: URL_OK,
        pending_update_count: 1,
        checked_at: new Date(NOW).toISOString(),
      },
    });
  });

  it('is healthy before the first check, and does not judge unmanaged webhooks', () => {
    expect(webhookBotHealth(bot('webhook'), {}, NOW)).toMatchObject({ healthy: true });
    expect(webhookBotHealth(bot('webhook', false), { webhook_info: '{"url":""}' }, NOW)).toEqual({
      id: 'shop',
      mode: 'webhook',
      polling: false,
      healthy: true,
      webhook: { manage: false },
    });
  });
});

describe('pollingBotHealth', () => {
  it("is the lease holder's published state", () => {
    expect(
      pollingBotHealth(
        bot('polling'),
        { poller_state: 'polling', poller_since: String(NOW) },
        true,
      ),
    ).toEqual({
      id: 'shop',
      mode: 'polling',
      polling: true,
      healthy: true,
      state: 'polling',
      since: new Date(NOW).toISOString(),
    });
    expect(
      pollingBotHealth(
        bot('polling'),
        {
          poller_state: 'unauthorized',
          poller_problem: 'Telegram refuses the bot token (401 Unauthorized)',
        },
        true,
      ),
    ).toMatchObject({
      healthy: false,
      state: 'unauthorized',
      problem: 'Telegram refuses the bot token (401 Unauthorized)',
    });
  });

  it('is unhealthy while no replica holds the lease', () => {
    expect(pollingBotHealth(bot('polling'), { poller_state: 'polling' }, false)).toEqual({
      id: 'shop',
      mode: 'polling',
      polling: false,
      healthy: false,
      state: 'stopped',
      problem: 'no replica polls this bot (the poller lease is free)',
    });
  });
});
