import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';

export interface TestConfigFile {
  /** The YAML file to pass as RELAYGRAM_CONFIG. */
  path: string;
  /** The Redis key prefix it sets, unique to this file, so tests never touch real data. */
  prefix: string;
  remove(): void;
}

/**
 * Writes a Relaygram config for one test into a temp directory: `redis.prefix` is
 * unique, and `body` (YAML for bots, routes, clients...) follows it.
 */
export function writeTestConfig(body = '', options: { prefix?: string } = {}): TestConfigFile {
  const dir = mkdtempSync(join(tmpdir(), 'relaygram-test-'));
  const prefix = options.prefix ?? `t-${randomUUID().slice(0, 8)}`;
  const path = join(dir, 'relaygram.yaml');
  writeFileSync(path, `redis:\n  prefix: ${prefix}\n${body}`);
  return { path, prefix, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A config given as an object, written as YAML in a directory of its own. */
export function writeConfigObject(config: object): { path: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'relaygram-test-'));
  const path = join(dir, 'relaygram.yaml');
  writeFileSync(path, stringify(config));
  return { path, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A bot on long polling, its token read from `<ID>_TOKEN`. */
export function pollingBot(id: string): Record<string, unknown> {
  return { id, token_env: tokenEnv(id), mode: 'polling' };
}

/**
 * A webhook bot whose public URL Telegram never calls: the test posts its updates to the
 * app itself. `webhook` adds to the webhook block (`manage: false` keeps setWebhook out of
 * the test); `extra` to the bot.
 */
export function webhookBot(
  id: string,
  secretEnv: string,
  webhook: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    id,
    token_env: tokenEnv(id),
    mode: 'webhook',
    webhook: {
      url: `https://relay.example.com/webhooks/telegram/${id}`,
      secret_token_env: secretEnv,
      ...webhook,
    },
    ...extra,
  };
}

/**
 * A config on a test's own key prefix whose Bot API is the emulator's: `rest` holds the
 * bots, routes and clients. The Redis URL is the app's REDIS_URL (see `testAppEnv`).
 */
export function writeEmulatedConfig(
  prefix: string,
  apiRoot: string,
  rest: object,
): { path: string; cleanup(): void } {
  return writeConfigObject({
    redis: { url: 'redis://127.0.0.1:6379', prefix },
    telegram: { api_base: apiRoot },
    ...rest,
  });
}

function tokenEnv(id: string): string {
  return `${id.toUpperCase().replace(/-/g, '_')}_TOKEN`;
}
