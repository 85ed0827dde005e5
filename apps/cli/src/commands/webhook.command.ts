import { resolve } from 'node:path';
import type { Command } from 'commander';
import {
  defaultConfigPath,
  loadConfigOrThrow,
  type BotConfig,
  type RelaygramConfig,
} from '@relaygram/config';
import { errorMessage } from '@relaygram/contracts';
import { assessWebhookInfo, setWebhookParams, type WebhookInfo } from '@relaygram/ingress';
import { displayUrl } from '@relaygram/observability';
import { TelegramClient } from '@relaygram/telegram';

interface WebhookOptions {
  config?: string;
  json?: boolean;
}

type Action = 'info' | 'set' | 'delete';

/** `relaygram webhook ...`: read and fix Telegram's webhook of a bot, from the config. */
export function registerWebhookCommands(program: Command): void {
  const webhook = program
    .command('webhook')
    .helpGroup('Telegram:')
    .description("inspect or fix a bot's webhook at Telegram")
    .showHelpAfterError('(add --help for usage)');

  const configOption = [
    '-c, --config <file>',
    'config file (default: $RELAYGRAM_CONFIG or config/relaygram.yaml)',
  ] as const;
  const jsonOption = ['--json', 'print JSON instead of a table'] as const;

  webhook
    .command('info')
    .description("show Telegram's getWebhookInfo for a bot, next to the configured URL")
    .argument('<bot>', 'bot id from the config')
    .option(...configOption)
    .option(...jsonOption)
    .action((bot: string, options: WebhookOptions) => run('info', bot, options));

  webhook
    .command('set')
    .description(
      'call setWebhook with the configured URL, secret, allowed_updates and max_connections; pending updates are kept',
    )
    .argument('<bot>', 'bot id from the config (a bot in webhook mode)')
    .option(...configOption)
    .option(...jsonOption)
    .action((bot: string, options: WebhookOptions) => run('set', bot, options));

  webhook
    .command('delete')
    .description('call deleteWebhook; pending updates are kept (never dropped)')
    .argument('<bot>', 'bot id from the config')
    .option(...configOption)
    .option(...jsonOption)
    .action((bot: string, options: WebhookOptions) => run('delete', bot, options));
}

async function run(action: Action, botId: string, options: WebhookOptions): Promise<void> {
  const config = loadConfigOrThrow({ path: resolve(options.config ?? defaultConfigPath()) });
  const bot = findBot(config, botId);
  if (action === 'set' && (bot.mode !== 'webhook' || !bot.webhook)) {
    throw new Error(
      `bot ${bot.id} is in polling mode: its poller deletes any webhook. Set bots[].mode to webhook (with bots[].webhook) to use one`,
    );
  }
  const client = new TelegramClient({
    apiBase: config.telegram.apiBase,
    token: bot.token,
    botId: bot.id,
  });
  try {
    if (action === 'set') await client.call('setWebhook', setWebhookParams(bot));
    if (action === 'delete') await client.call('deleteWebhook', { drop_pending_updates: false });
    const info = await client.call<WebhookInfo>('getWebhookInfo');
    const report = describe(bot, info, action);
    process.stdout.write(options.json ? `${JSON.stringify(report, null, 2)}\n` : table(report));
    if (action === 'delete' && bot.mode === 'webhook' && bot.webhook?.manage) {
      process.stderr.write(
        `note: ingress sets the webhook of ${bot.id} again at its next start (webhook.manage is true)\n`,
      );
    }
  } catch (error) {
    const method = action === 'info' ? 'getWebhookInfo' : `${action}Webhook`;
    throw new Error(`${method} failed for bot ${bot.id}: ${errorMessage(error)}`, {
      cause: error,
    });
  } finally {
    await client.close();
  }
}

function findBot(config: RelaygramConfig, id: string): BotConfig {
  const bot = config.bots.find((b) => b.id === id);
  if (bot) return bot;
  const known = config.bots.map((b) => b.id);
  throw new Error(
    `unknown bot "${id}" in ${config.source} (${known.length ? `bots: ${known.join(', ')}` : 'no bots configured'})`,
  );
}

interface WebhookReport {
  bot: string;
  mode: BotConfig['mode'];
  /** What was done before reading the info. */
  action?: 'set' | 'delete';
  configured_url?: string;
  status: 'ok' | 'problem' | 'no webhook expected';
  problem?: string;
  webhook: Record<string, unknown>;
}

function describe(bot: BotConfig, info: WebhookInfo, action: Action): WebhookReport {
  const webhook: Record<string, unknown> = { ...info, url: displayUrl(info.url) };
  const report: WebhookReport = { bot: bot.id, mode: bot.mode, status: 'ok', webhook };
  if (action !== 'info') report.action = action;
  if (bot.mode === 'webhook' && bot.webhook) {
    report.configured_url = displayUrl(bot.webhook.url);
    const { problem } = assessWebhookInfo(info, bot.webhook.url, Date.now());
    if (problem) {
      report.status = 'problem';
      report.problem = problem;
    }
  } else if (info.url) {
    report.status = 'problem';
    report.problem = `a webhook is set for a polling bot: getUpdates fails until it is deleted (its poller does that)`;
  } else {
    report.status = 'no webhook expected';
  }
  return report;
}

function table(report: WebhookReport): string {
  const info = report.webhook;
  const rows: [string, string][] = [['bot', `${report.bot} (${report.mode})`]];
  if (report.action) {
    rows.push([
      'done',
      report.action === 'set'
        ? 'setWebhook (pending updates kept)'
        : 'deleteWebhook (pending updates kept)',
    ]);
  }
  rows.push(['status', report.problem ? `${report.status}: ${report.problem}` : report.status]);
  rows.push(['url', String(info.url) || '(none)']);
  if (report.configured_url !== undefined) rows.push(['configured url', report.configured_url]);
  rows.push(['pending updates', String(info.pending_update_count ?? 0)]);
  if (typeof info.last_error_date === 'number') {
    rows.push(['last error date', when(info.last_error_date)]);
  }
  if (typeof info.last_error_message === 'string') {
    rows.push(['last error message', info.last_error_message]);
  }
  if (typeof info.last_synchronization_error_date === 'number') {
    rows.push(['last sync error date', when(info.last_synchronization_error_date)]);
  }
  if (info.max_connections !== undefined) {
    rows.push(['max connections', String(info.max_connections)]);
  }
  if (Array.isArray(info.allowed_updates)) {
    rows.push(['allowed updates', info.allowed_updates.join(', ')]);
  }
  if (typeof info.ip_address === 'string') rows.push(['ip address', info.ip_address]);
  const width = Math.max(...rows.map(([key]) => key.length)) + 2;
  return rows.map(([key, value]) => `${key.padEnd(width)}${value}`).join('\n') + '\n';
}

function when(unixSeconds: number): string {
  const ago = Math.max(0, Math.round(Date.now() / 1000 - unixSeconds));
  const relative =
    ago < 120
      ? `${ago} s ago`
      : ago < 7200
        ? `${Math.round(ago / 60)} min ago`
        : `${Math.round(ago / 3600)} h ago`;
  return `${new Date(unixSeconds * 1000).toISOString()} (${relative})`;
}
