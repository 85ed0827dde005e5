import { Secret, type BotConfig } from '@relaygram/config';
import {
  setWebhookParams,
  webhookSettingsChanged,
  webhookSettingsFingerprint,
} from './webhook-settings';

function bot(overrides: Partial<BotConfig> = {}, secret = 'first-secret'): BotConfig {
  return {
    id: 'shop',
    tokenEnv: 'SHOP_TOKEN',
    token: new Secret('123456:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'),
    numericId: '123456',
    mode: 'webhook',
    allowedUpdates: ['message', 'callback_query'],
    default: false,
    webhook: {
      url: 'https://relay.example/webhooks/telegram/shop',
      secretTokenEnv: 'SHOP_SECRET',
      secretToken: new Secret(secret),
      maxConnections: 40,
      manage: true,
      checkEveryMs: 60_000,
    },
    ...overrides,
  };
}

describe('setWebhookParams', () => {
  it('sends the configured URL, the secret, allowed_updates and max_connections, never dropping updates', () => {
    expect(setWebhookParams(bot())).toEqual({
      url: 'https://relay.example/webhooks/telegram/shop',
      secret_token: 'first-secret',
      allowed_updates: ['message', 'callback_query'],
      max_connections: 40,
      drop_pending_updates: false,
    });
  });

  it('refuses a polling bot', () => {
    expect(() => setWebhookParams(bot({ mode: 'polling', webhook: undefined }))).toThrow(
      'bot shop is not in webhook mode',
    );
  });
});

describe('webhook settings changes', () => {
  it('sees a rotated secret, and keeps the secret out of the fingerprint', () => {
    const before = bot();
    const after = bot({}, 'second-secret');
    expect(webhookSettingsChanged(before, bot())).toBe(false);
    expect(webhookSettingsChanged(before, after)).toBe(true);
    expect(webhookSettingsChanged(before, bot({ allowedUpdates: ['message'] }))).toBe(true);
    expect(webhookSettingsFingerprint(before)).toBe(webhookSettingsFingerprint(bot()));
    expect(webhookSettingsFingerprint(before)).not.toBe(webhookSettingsFingerprint(after));
    expect(webhookSettingsFingerprint(before)).not.toContain('first-secret');
  });
});
