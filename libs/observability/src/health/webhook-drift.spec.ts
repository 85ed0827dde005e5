import { webhookProblem, WEBHOOK_ERROR_WINDOW_MS } from './webhook-drift';

const URL = 'https://relay.example.com/webhooks/telegram/shop';
const NOW = 1_800_000_000_000;
const seconds = (ms: number) => Math.floor(ms / 1000);

describe('webhookProblem', () => {
  it('finds nothing wrong with the configured URL and no recent error', () => {
    expect(webhookProblem({ url: URL, pending_update_count: 3 }, URL, NOW)).toBeUndefined();
    expect(
      webhookProblem(
        { url: URL, pending_update_count: 0, last_error_date: seconds(NOW) - 10 },
        URL,
        NOW,
      ),
    ).toBeUndefined();
  });

  it('reports another URL, or none', () => {
    expect(webhookProblem({ url: 'https://old.example.com/x' }, URL, NOW)).toBe(
      `Telegram sends updates to https://old.example.com/x, not to the configured ${URL}`,
    );
    expect(webhookProblem({ url: '' }, URL, NOW)).toMatch(/^no webhook is set at Telegram/);
  });

  it('compares whole URLs, query included, without showing the query', () => {
    expect(webhookProblem({ url: `${URL}?k=1` }, `${URL}?k=1`, NOW)).toBeUndefined();
    expect(
      webhookProblem({ url: URL.replace('https://relay', 'https://RELAY') }, URL, NOW),
    ).toBeUndefined();
    const drift = webhookProblem({ url: `${URL}?k=old-secret` }, `${URL}?k=new-secret`, NOW);
    expect(drift).toBe(
      `Telegram sends updates to ${URL}?…, not to the configured ${URL}?… (they differ in the part not shown)`,
    );
    expect(webhookProblem({ url: URL }, `${URL}?k=1`, NOW)).toBe(
      `Telegram sends updates to ${URL}, not to the configured ${URL}?…`,
    );
  });

  it('compares as shown what a reporter already made fit to show', () => {
    expect(webhookProblem({ url: `${URL}?…` }, `${URL}?k=1`, NOW)).toBeUndefined();
  });

  it('reports a recent error while updates are pending, with Telegram message', () => {
    const info = {
      url: URL,
      pending_update_count: 4,
      last_error_date: seconds(NOW) - 60,
      last_error_message: 'Wrong response from the webhook: 301 Moved Permanently',
    };
    expect(webhookProblem(info, URL, NOW)).toBe(
      'Telegram cannot deliver (4 pending): Wrong response from the webhook: 301 Moved Permanently',
    );
    const old = { ...info, last_error_date: seconds(NOW - WEBHOOK_ERROR_WINDOW_MS) - 1 };
    expect(webhookProblem(old, URL, NOW)).toBeUndefined();
  });
});
