import { randomBytes, randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getMetadataStorage } from 'class-validator';
import { parse } from 'yaml';
import { loadConfig } from './loader';
import { BotDto, OutboundDto, WebhookDto } from './schema/bot.dto';
import { ClientDto } from './schema/client.dto';
import { DeliveryLogDto } from './schema/delivery-log.dto';
import { RedisDto } from './schema/redis.dto';
import { RelaygramConfigDto } from './schema/relaygram-config.dto';
import { PullDto, RetryDto, RouteDto, RouteMatchDto } from './schema/route.dto';
import { TelegramDto } from './schema/telegram.dto';

const CONFIG_DIR = join(__dirname, '..', '..', '..', 'config');
const EXAMPLE = join(CONFIG_DIR, 'relaygram.example.yaml');
const SHIPPED = join(CONFIG_DIR, 'relaygram.yaml');

const token = (): string =>
  `${randomInt(100_000, 9_999_999_999)}:${randomBytes(27).toString('base64url')}`;
const secret = (): string => randomBytes(24).toString('base64url');

/** The variables config/relaygram.example.yaml names, with values of the right form. */
const EXAMPLE_ENV: NodeJS.ProcessEnv = {
  SOL_PROD_BOT_TOKEN: token(),
  SHOP_BOT_TOKEN: token(),
  SHOP_BOT_WEBHOOK_SECRET: secret(),
  SHOP_SIGNING_SECRET: secret(),
  SHOP_BUTTONS_SIGNING_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
  SITE_SERVICE_TOKEN: secret(),
  SITE_TELEGRAM_SECRET_TOKEN: secret(),
  SUPPORT_BOT_CLIENT_TOKEN: secret(),
};

describe('config/relaygram.yaml as shipped', () => {
  it('loads with no bots and says how to add one', () => {
    const result = loadConfig({ path: SHIPPED, env: {} });
    expect(result).toMatchObject({
      ok: true,
      config: {
        redis: { url: 'redis://127.0.0.1:6379', prefix: 'relaygram' },
        telegram: { apiBase: 'https://api.telegram.org' },
        bots: [],
        routes: [],
        clients: [],
        source: SHIPPED,
      },
    });
    expect(result.ok && result.config.warnings).toEqual([
      expect.stringContaining('config/relaygram.example.yaml'),
    ]);
  });

  it('points at the example and the demo in its comments', () => {
    const text = readFileSync(SHIPPED, 'utf8');
    expect(text).toContain('config/relaygram.example.yaml');
    expect(text).toContain('npm run demo');
  });
});

describe('config/relaygram.example.yaml', () => {
  it('loads with its env vars set, without warnings', () => {
    const result = loadConfig({ path: EXAMPLE, env: EXAMPLE_ENV });
    if (!result.ok) throw new Error(result.problems.join('\n'));
    const { config } = result;
    expect(config.bots.map((b) => [b.id, b.mode, b.default])).toEqual([
      ['sol-prod', 'polling', true],
      ['shop-bot', 'webhook', false],
    ]);
    expect(config.routes.map((r) => r.name)).toEqual(['shop-admin', 'shop-buttons', 'site']);
    expect(config.pullRoutes?.map((r) => [r.name, r.pull.client])).toEqual([
      ['support', 'support-bot'],
    ]);
    expect(config.clients.map((c) => c.name)).toEqual(['site', 'support-bot']);
    expect(config.warnings).toEqual([]);
    expect(config.bots[0].token.reveal()).toBe(EXAMPLE_ENV.SOL_PROD_BOT_TOKEN);
  });

  it('loads with noEnv and no variables at all', () => {
    expect(loadConfig({ path: EXAMPLE, env: {}, noEnv: true })).toMatchObject({ ok: true });
  });

  it('names every missing variable when they are not set', () => {
    const result = loadConfig({ path: EXAMPLE, env: {} });
    expect(result.ok).toBe(false);
    const missing = (result.ok ? [] : result.problems).map(
      (line) => /environment variable (\w+) is not set$/.exec(line)?.[1],
    );
    expect(new Set(missing)).toEqual(new Set(Object.keys(EXAMPLE_ENV)));
  });

  it('shows every key the schema knows', () => {
    const example = parse(readFileSync(EXAMPLE, 'utf8')) as Record<string, unknown>;
    const bots = list(example.bots);
    const routes = list(example.routes);
    const sections: Array<[string, new () => object, Array<Record<string, unknown>>]> = [
      ['top level', RelaygramConfigDto, [example]],
      ['redis', RedisDto, list([example.redis])],
      ['telegram', TelegramDto, list([example.telegram])],
      ['bots[]', BotDto, bots],
      ['bots[].webhook', WebhookDto, list(bots.map((b) => b.webhook))],
      ['bots[].outbound', OutboundDto, list(bots.map((b) => b.outbound))],
      ['routes[]', RouteDto, routes],
      ['routes[].pull', PullDto, list(routes.map((r) => r.pull))],
      ['routes[].match', RouteMatchDto, list(routes.map((r) => r.match))],
      ['routes[].retry', RetryDto, list(routes.map((r) => r.retry))],
      ['clients[]', ClientDto, list(example.clients)],
      ['delivery_log', DeliveryLogDto, list([example.delivery_log])],
    ];
    for (const [name, dto, nodes] of sections) {
      const used = new Set(nodes.flatMap((node) => Object.keys(node)));
      const missing = schemaKeys(dto).filter((key) => !used.has(key));
      expect({ section: name, missing }).toEqual({ section: name, missing: [] });
    }
  });
});

function schemaKeys(dto: new () => object): string[] {
  const metadata = getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false);
  return [...new Set(metadata.map((m) => m.propertyName))];
}

function list(value: unknown): Array<Record<string, unknown>> {
  return (Array.isArray(value) ? value : []).filter(
    (item): item is Record<string, unknown> => typeof item === 'object' && item !== null,
  );
}
