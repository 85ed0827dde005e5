import type {
  BotConfig,
  RelaygramConfig,
  RouteConfig,
  RouteMatch,
  Secret,
} from '@relaygram/config';
import { UPDATE_SAMPLES, VARIANT_SAMPLES } from './fixtures/updates.fixture';
import { isPullRoute, selectAllRoutes, selectRoutes } from './route-selector';

const ALICE = 123456789;
// Type imports only: loading @relaygram/config pulls in Nest, and routing reads no token.
const UNUSED_TOKEN = Object.freeze({}) as unknown as Secret;

function bot(id: string, username?: string): BotConfig {
  return {
    id,
    tokenEnv: `${id.toUpperCase().replace(/-/g, '_')}_TOKEN`,
    token: UNUSED_TOKEN,
    numericId: '7012345678',
    username,
    mode: 'polling',
    allowedUpdates: ['message', 'callback_query'],
    default: false,
  };
}

function route(name: string, bots: string[], match?: RouteMatch): RouteConfig {
  return {
    name,
    bots,
    targetUrl: `http://127.0.0.1:9/${name}`,
    match,
    format: 'update',
    ordering: 'chat',
    concurrency: 32,
    timeoutMs: 10_000,
    signature: 'relaygram-v1',
    webhookReply: true,
    retry: { maxAgeMs: 86_400_000, backoffCapMs: 300_000, maxConsecutive5xx: 8 },
  };
}

function config(bots: BotConfig[], routes: RouteConfig[]): RelaygramConfig {
  return {
    redis: { url: 'redis://127.0.0.1:6379', prefix: 'relaygram', waitReplicas: 0, waitTimeoutMs: 500 },
    telegram: { apiBase: 'https://api.telegram.org' },
    bots,
    routes,
    clients: [],
    warnings: [],
    source: 'test',
  };
}

const names = (routes: readonly RouteConfig[]) => routes.map((r) => r.name);

describe('selectRoutes', () => {
  const shop = config(
    [bot('shop-bot', 'ThisBot'), bot('sol-prod')],
    [
      route('everything', ['shop-bot']),
      route('shop-admin', ['shop-bot'], { userIds: [ALICE], commands: ['/orders', '/admin'] }),
      route('buttons', ['shop-bot', 'sol-prod'], { callbackPrefixes: ['order:'] }),
      route('site', ['sol-prod']),
      route('polls', ['shop-bot'], { updateTypes: ['poll', 'poll_answer'] }),
      route('audit', ['shop-bot', 'sol-prod'], { userIds: [ALICE] }),
    ],
  );

  it('fans one update out to every matching route, in config order', () => {
    expect(names(selectRoutes(shop, 'shop-bot', UPDATE_SAMPLES.message))).toEqual([
      'everything',
      'shop-admin',
      'audit',
    ]);
    expect(names(selectRoutes(shop, 'shop-bot', UPDATE_SAMPLES.callback_query))).toEqual([
      'everything',
      'buttons',
      'audit',
    ]);
  });

  it('returns the route objects of the config', () => {
    const [first] = selectRoutes(shop, 'shop-bot', UPDATE_SAMPLES.poll);
    expect(first).toBe(shop.routes[0]);
  });

  it('only takes routes of the bot the update came from', () => {
    expect(names(selectRoutes(shop, 'sol-prod', UPDATE_SAMPLES.callback_query))).toEqual([
      'buttons',
      'site',
      'audit',
    ]);
    expect(names(selectRoutes(shop, 'sol-prod', UPDATE_SAMPLES.poll))).toEqual(['site']);
  });

  it('returns nothing for a bot no route lists', () => {
    expect(selectRoutes(shop, 'other-bot', UPDATE_SAMPLES.message)).toEqual([]);
  });

  it('returns nothing when no route matches (the update is ignored)', () => {
    const narrow = config([bot('shop-bot')], [route('admin', ['shop-bot'], { userIds: [1] })]);
    expect(selectRoutes(narrow, 'shop-bot', UPDATE_SAMPLES.message)).toEqual([]);
  });

  it('routes unknown update types by their `from` and `chat`, never by commands', () => {
    expect(names(selectRoutes(shop, 'shop-bot', VARIANT_SAMPLES.futureType))).toEqual([
      'everything',
      'audit',
    ]);
  });

  describe('bot username', () => {
    // The sample command is `/orders@ThisBot`.
    it('comes from the config', () => {
      expect(names(selectRoutes(shop, 'shop-bot', UPDATE_SAMPLES.message))).toContain('shop-admin');
    });

    it('is overridden by the one learned from getMe', () => {
      const selected = selectRoutes(shop, 'shop-bot', UPDATE_SAMPLES.message, {
        botUsername: 'renamed_bot',
      });
      expect(names(selected)).not.toContain('shop-admin');
    });

    it('is needed for a suffixed command to match', () => {
      const anonymous = config(
        [bot('sol-prod')],
        [route('orders', ['sol-prod'], { commands: ['/orders'] })],
      );
      expect(selectRoutes(anonymous, 'sol-prod', UPDATE_SAMPLES.message)).toEqual([]);
      expect(
        names(
          selectRoutes(anonymous, 'sol-prod', UPDATE_SAMPLES.message, { botUsername: 'thisbot' }),
        ),
      ).toEqual(['orders']);
    });
  });

  it('gives answers for each config object on its own', () => {
    const before = config([bot('shop-bot')], [route('a', ['shop-bot'], { userIds: [ALICE] })]);
    const after = config([bot('shop-bot')], [route('b', ['shop-bot'], { userIds: [2] })]);
    expect(names(selectRoutes(before, 'shop-bot', UPDATE_SAMPLES.message))).toEqual(['a']);
    expect(names(selectRoutes(after, 'shop-bot', UPDATE_SAMPLES.message))).toEqual([]);
    expect(names(selectRoutes(before, 'shop-bot', UPDATE_SAMPLES.message))).toEqual(['a']);
  });

  it('lists a route once even when it names the bot twice', () => {
    const twice = config([bot('shop-bot')], [route('dup', ['shop-bot', 'shop-bot'])]);
    expect(names(selectRoutes(twice, 'shop-bot', UPDATE_SAMPLES.message))).toEqual(['dup']);
  });

  it('returns a fresh array each call', () => {
    const first = selectRoutes(shop, 'shop-bot', UPDATE_SAMPLES.poll);
    first.length = 0;
    expect(selectRoutes(shop, 'shop-bot', UPDATE_SAMPLES.poll)).not.toHaveLength(0);
  });

  it('leaves pull routes to selectAllRoutes, which ingress enqueues for', () => {
    const mixed: RelaygramConfig = {
      ...config([bot('shop-bot')], [route('push', ['shop-bot'])]),
      pullRoutes: [
        {
          name: 'pulled',
          bots: ['shop-bot'],
          match: { userIds: [ALICE] },
          pull: { client: 'laptop' },
          maxAgeMs: 86_400_000,
        },
        {
          name: 'other-user',
          bots: ['shop-bot'],
          match: { userIds: [1] },
          pull: { client: 'x' },
          maxAgeMs: 1,
        },
      ],
    };
    expect(names(selectRoutes(mixed, 'shop-bot', UPDATE_SAMPLES.message))).toEqual(['push']);
    const all = selectAllRoutes(mixed, 'shop-bot', UPDATE_SAMPLES.message);
    expect(all.map((r) => [r.name, isPullRoute(r)])).toEqual([
      ['push', false],
      ['pulled', true],
    ]);
  });
});
