import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  stablePort,
  type BotIdentity,
  type RecordingReceiver,
  type TelegramEmulator,
} from '@relaygram/testing';
import { AppProcess, eventually, type AppName } from './app-process';

/** The hash-tagged prefix that keeps every key of an install in one cluster slot. */
export const CLUSTER_PREFIX = '{relaygram}';

export interface TwoBotInstall {
  pollBot: BotIdentity;
  hookBot: BotIdentity;
  /** Every env var the apps got, secrets included. */
  env: Record<string, string>;
}

export interface TwoBotOptions {
  /** `redis.url` of the apps (REDIS_URL). */
  redisUrl: string;
  /** Keys added under `redis:`, already indented. */
  redisKeys?: string;
  /** YAML appended after the `everything` route: more routes, `clients:`. */
  more?: string;
  /** Env vars that YAML names. */
  moreEnv?: Record<string, string>;
  /** The apps to start, in this order. */
  start: AppName[];
}

/**
 * The install the cluster suites share: a polling bot and a webhook bot of the emulator,
 * a route `everything` to the receiver, signed, on `{relaygram}`. Its apps are pushed
 * to `apps` as they start (so the suite stops them whatever happens), and are ready,
 * the webhook set, when it returns.
 */
export async function startTwoBotInstall(
  dir: string,
  emulator: TelegramEmulator,
  receiver: RecordingReceiver,
  options: TwoBotOptions,
  apps: AppProcess[],
): Promise<TwoBotInstall> {
  const pollBot = emulator.addBot({ username: `poll_bot_${randomBytes(3).toString('hex')}` });
  const hookBot = emulator.addBot({ username: `hook_bot_${randomBytes(3).toString('hex')}` });
  const ingressPort = await stablePort();
  const configPath = join(dir, 'relaygram.yaml');
  writeFileSync(
    configPath,
    `redis:
  prefix: "${CLUSTER_PREFIX}"
${options.redisKeys ?? ''}bots:
  - id: poll-bot
    token_env: POLL_BOT_TOKEN
    mode: polling
  - id: hook-bot
    token_env: HOOK_BOT_TOKEN
    mode: webhook
    webhook:
      url: http://127.0.0.1:${ingressPort}/webhooks/telegram/hook-bot
      secret_token_env: HOOK_BOT_SECRET
routes:
  - name: everything
    target_url: ${receiver.url}/everything
    signing_secret_env: EVERYTHING_SECRET
${options.more ?? ''}`,
  );
  const env = {
    RELAYGRAM_CONFIG: configPath,
    REDIS_URL: options.redisUrl,
    TELEGRAM_API_BASE: emulator.apiRoot,
    POLL_BOT_TOKEN: pollBot.token,
    HOOK_BOT_TOKEN: hookBot.token,
    HOOK_BOT_SECRET: randomBytes(16).toString('hex'),
    EVERYTHING_SECRET: randomBytes(32).toString('hex'),
    ...options.moreEnv,
  };
  const started = apps.length;
  for (const app of options.start) {
    apps.push(
      await AppProcess.start(app, env, app === 'ingress' ? { port: ingressPort } : undefined),
    );
  }
  await Promise.all(apps.slice(started).map((app) => app.ready()));
  await eventually(
    () => emulator.webhookInfo(hookBot.id).url.endsWith('/webhooks/telegram/hook-bot'),
    'the webhook set by ingress',
  );
  return { pollBot, hookBot, env };
}
