import type { PullRouteConfig } from '@relaygram/config';
import { PULL_STALE_AFTER_MS, pullRouteView, stalePullProblem } from './pull-route-view';

const ROUTE: PullRouteConfig = {
  name: 'support',
  bots: ['sol'],
  pull: { client: 'support-bot' },
  maxAgeMs: 24 * 3600_000,
};
const NOW = Date.parse('2026-12-02T10:00:00Z');

describe('pullRouteView', () => {
  it('shows the pending count and the last poll, fresh while the client polls', () => {
    const view = pullRouteView(
      ROUTE,
      { route: 'support', bot: 'sol', pending: 3, polledAt: NOW - 60_000 },
      NOW,
    );
    expect(view).toEqual({
      route: 'support',
      client: 'support-bot',
      pending: 3,
      last_polled_at: '2026-12-02T09:59:00.000Z',
      stale: false,
    });
  });

  it('is stale when updates wait and the client has not polled for 5 minutes', () => {
    const lane = { route: 'support', bot: 'sol', pending: 2, polledAt: NOW - PULL_STALE_AFTER_MS };
    const view = pullRouteView(ROUTE, lane, NOW);
    expect(view.stale).toBe(true);
    expect(stalePullProblem(view)).toBe(
      'pull route support: client support-bot has not polled for 5 minutes while 2 updates wait',
    );
    expect(
      pullRouteView(ROUTE, { ...lane, polledAt: NOW - PULL_STALE_AFTER_MS + 1 }, NOW).stale,
    ).toBe(false);
  });

  it('is never stale with nothing waiting, and stale when updates wait for a client that never polled', () => {
    expect(
      pullRouteView(ROUTE, { route: 'support', bot: 'sol', pending: 0, polledAt: 0 }, NOW).stale,
    ).toBe(false);
    const never = pullRouteView(ROUTE, { route: 'support', bot: 'sol', pending: 1 }, NOW);
    expect(never).toMatchObject({ last_polled_at: null, stale: true });
    expect(stalePullProblem(never)).toBe(
      'pull route support: client support-bot has never polled while 1 updates wait',
    );
  });

  it('knows nothing when Redis did not answer', () => {
    expect(pullRouteView(ROUTE, undefined, NOW)).toMatchObject({
      pending: null,
      last_polled_at: null,
      stale: false,
    });
  });
});
