import { loadConfigOrThrow } from './loader';
import { secretValuesOf } from './secret-values';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Secret } from './secret';
import type { RuntimeEnv } from './runtime-env';

describe('secretValuesOf', () => {
  it("finds every secret of the config and the admin token, and bot tokens' secret halves", () => {
    const dir = mkdtempSync(join(tmpdir(), 'relaygram-secrets-'));
    try {
      const path = join(dir, 'relaygram.yaml');
      writeFileSync(
        path,
        `bots:
  - id: shop
    token_env: SHOP_TOKEN
    mode: webhook
    webhook: { url: https://relay.example/hook, secret_token_env: HOOK }
routes:
  - name: site
    target_url: https://site.example/x
    signing_secret_env: SIGN
    service_token_env: SERVICE
    telegram_secret_token_env: TG
clients:
  - { name: site, token_env: CLIENT, bots: [shop] }
`,
      );
      const env = {
        SHOP_TOKEN: '123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw',
        HOOK: 'hook-secret-value-1',
        SIGN: 'signing-secret-value-2',
        SERVICE: 'service-token-value-3',
        TG: 'telegram-secret-value-4',
        CLIENT: 'client-token-value-5',
      };
      const config = loadConfigOrThrow({ path, env });
      const values = secretValuesOf(config, {
        adminToken: new Secret('admin-token-value-6'),
      } as unknown as RuntimeEnv);
      expect(new Set(values)).toEqual(
        new Set([
          ...Object.values(env),
          'AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw',
          'admin-token-value-6',
        ]),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
