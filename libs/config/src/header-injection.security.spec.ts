import { randomBytes, randomInt } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { fuzzParameters } from '@relaygram/testing';
import { stringify } from 'yaml';
import { loadConfig } from './loader';

/**
 * Route names and bot ids go into headers (X-Webhook-Route, X-Relaygram-Bot), paths,
 * metric labels and Redis keys; service tokens and Telegram secret tokens go into
 * headers as they are. Validation is what keeps a CR, an LF, a colon or a space out of
 * all of them: a config is accepted only when every such value has the documented shape.
 *
 * Replay a failure with the seed fast-check prints: FC_SEED=<seed> (and FC_PATH=<path>);
 * FC_NUM_RUNS raises or lowers the number of runs.
 */
const NAME = /^[a-z0-9-]{1,64}$/;
const VISIBLE_ASCII = /^[\x21-\x7e]+$/;
const TELEGRAM_SECRET = /^[A-Za-z0-9_-]{1,256}$/;

const dir = mkdtempSync(join(tmpdir(), 'relaygram-header-injection-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

const botToken = `${randomInt(100_000, 9_999_999)}:${randomBytes(27).toString('base64url')}`;

function load(doc: object, env: Record<string, string>) {
  const path = join(dir, `c${n++}.yaml`);
  writeFileSync(path, stringify(doc));
  return loadConfig({ path, env: { BOT_TOKEN: botToken, ...env } });
}

const hostile = fc.oneof(
  fc.constantFrom(
    'shop\r\nX-Injected: 1',
    'shop\nx',
    'shop\r',
    'shop x',
    'shop:1',
    'Shop',
    'shop/../admin',
    'shop%0d%0a',
    'shop\u0000',
    'shop\u2028',
    'шоп',
    '',
    'a'.repeat(65),
    'ok-name',
    'a',
    '0-9',
  ),
  fc.string({ maxLength: 70 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.stringMatching(/^[a-z0-9-]{1,64}$/),
);

function base(botId: string, route: string, extra: Record<string, unknown> = {}) {
  return {
    redis: { url: 'redis://127.0.0.1:6379', prefix: 'relaygram' },
    telegram: { api_base: 'https://api.telegram.org' },
    bots: [{ id: botId, token_env: 'BOT_TOKEN', mode: 'polling' }],
    routes: [{ name: route, target_url: 'https://target.example/hook', ...extra }],
    clients: [],
  };
}

describe('config: no header injection through names or secrets', () => {
  it('accepts a bot id or route name only when it is 1-64 of a-z, 0-9 and -', () => {
    fc.assert(
      fc.property(hostile, fc.boolean(), (value, asBot) => {
        const result = load(
          asBot ? base(value, 'route-a', { bots: [value] }) : base('bot-a', value),
          {},
        );
        if (result.ok) {
          expect(value).toMatch(NAME);
          const names = [
            ...result.config.bots.map((b) => b.id),
            ...result.config.routes.map((r) => r.name),
          ];
          for (const name of names) expect(name).toMatch(NAME);
        } else if (NAME.test(value)) {
          throw new Error(`a valid name was refused: ${result.problems.join('; ')}`);
        }
      }),
      fuzzParameters(400),
    );
  });

  it('sends a service token only when it is visible ASCII (no CR, LF, space or control)', () => {
    fc.assert(
      fc.property(hostile, (value) => {
        const result = load(base('bot-a', 'route-a', { service_token_env: 'SERVICE_TOKEN' }), {
          SERVICE_TOKEN: value,
        });
        if (result.ok)
          expect(result.config.routes[0]?.serviceToken?.reveal()).toMatch(VISIBLE_ASCII);
      }),
      fuzzParameters(300),
    );
  });

  it("sends a Telegram secret token only in Telegram's own alphabet", () => {
    fc.assert(
      fc.property(hostile, (value) => {
        const result = load(base('bot-a', 'route-a', { telegram_secret_token_env: 'TG_SECRET' }), {
          TG_SECRET: value,
        });
        if (result.ok) {
          expect(result.config.routes[0]?.telegramSecretToken?.reveal()).toMatch(TELEGRAM_SECRET);
        }
      }),
      fuzzParameters(300),
    );
  });

  it('refuses a target URL or API base that carries CR, LF or spaces', () => {
    for (const url of [
      'https://target.example/hook\r\nX-Injected: 1',
      'https://target.example/ho ok',
      'https://target.example/hook\n',
      'https://target.example\r\n/hook',
    ]) {
      const result = load(
        { ...base('bot-a', 'route-a'), routes: [{ name: 'route-a', target_url: url }] },
        {},
      );
      expect(result.ok ? 'accepted' : 'refused').toBe('refused');
      const api = load({ ...base('bot-a', 'route-a'), telegram: { api_base: url } }, {});
      expect(api.ok ? 'accepted' : 'refused').toBe('refused');
    }
  });
});
