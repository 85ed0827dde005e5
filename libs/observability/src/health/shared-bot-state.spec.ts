import { parseSharedBotState } from './shared-bot-state';

const NOW = 1_800_000_000_000;
const URL = 'https://relay.example.com/webhooks/telegram/shop';

describe('parseSharedBotState', () => {
  it('knows nothing of a bot ingress never wrote about', () => {
    expect(parseSharedBotState({ id: 'a', mode: 'polling' }, {}, false, NOW)).toBeUndefined();
  });

  it('reads a polling bot from its lease and the poller state', () => {
    expect(
      parseSharedBotState(
        { id: 'a', mode: 'polling' },
        { poller_state: 'polling', poller_since: String(NOW) },
        true,
        NOW,
      ),
    ).toEqual({
      id: 'a',
      mode: 'polling',
      polling: true,
      healthy: true,
      state: 'polling',
      since: new Date(NOW).toISOString(),
    });
    expect(
      parseSharedBotState(
        { id: 'a', mode: 'polling' },
        { poller_state: 'unauthorized', poller_problem: 'getUpdates: 401 Unauthorized' },
        true,
        NOW,
      ),
    ).toMatchObject({
      healthy: false,
      state: 'unauthorized',
      problem: 'getUpdates: 401 Unauthorized',
    });
    expect(
      parseSharedBotState({ id: 'a', mode: 'polling' }, { poller_state: 'polling' }, false, NOW),
    ).toMatchObject({ polling: false, healthy: false, state: 'stopped' });
  });

  it('judges a webhook bot on the stored getWebhookInfo', () => {
    const bot = { id: 's', mode: 'webhook' as const, webhookUrl: URL };
    const ok = parseSharedBotState(
      bot,
      {
        webhook_info: JSON.stringify({ url: URL, pending_update_count: 0 }),
        webhook_info_at: String(NOW),
      },
      false,
      NOW,
    );
    expect(ok).toMatchObject({
      healthy: true,
      webhook: { url: URL, pending_update_count: 0, checked_at: new Date(NOW).toISOString() },
    });
    const drift = parseSharedBotState(
      bot,
      { webhook_info: JSON.stringify({ url: 'https://old.example.com/x' }) },
      false,
      NOW,
    );
    expect(drift).toMatchObject({
      healthy: false,
      problem: expect.stringContaining('old.example.com'),
    });
    const failed = parseSharedBotState(
      bot,
      { webhook_set_error: 'setWebhook: 400 bad url' },
      false,
      NOW,
    );
    expect(failed).toMatchObject({ healthy: false, problem: 'setWebhook: 400 bad url' });
  });
});
