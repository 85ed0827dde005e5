import { InvalidArgumentError, type Command } from 'commander';
import type { RelaygramConfig } from '@relaygram/config';
import { BROADCAST_RECORD_TTL_MS } from '@relaygram/contracts';
import {
  BroadcastStore,
  broadcastView,
  type BroadcastAction,
  type BroadcastRecord,
  type QueueContext,
} from '@relaygram/queue';
import { UsageError, withQueue, withStoreOptions, type StoreOptions } from './queue-session';
import { printable } from './terminal-text';

interface BotOptions extends StoreOptions {
  bot?: string;
}

interface ListOptions extends BotOptions {
  limit: number;
  json?: boolean;
}

interface ShowOptions extends BotOptions {
  json?: boolean;
}

/** Label column of `show`: the longest label ("progress", "finished") and two spaces. */
const LABEL_WIDTH = 10;
const MAX_LIMIT = 500;
const KEPT_DAYS = BROADCAST_RECORD_TTL_MS / 86_400_000;

const DONE_TO: Readonly<Record<BroadcastAction, string>> = {
  pause: 'paused',
  resume: 'resumed',
  cancel: 'cancelled',
};

const CONTROL_HELP: Readonly<Record<BroadcastAction, string>> = {
  pause: 'pause a running broadcast: dispatchers stop claiming its recipients',
  resume: 'resume a paused broadcast where it stopped',
  cancel: 'cancel a running or paused broadcast: its pending recipients are never sent',
};

/** `relaygram broadcast ...`: read and steer broadcasts in Redis, as the gateway's API does. */
export function registerBroadcastCommands(program: Command): void {
  const broadcast = program
    .command('broadcast')
    .helpGroup('Outbox:')
    .description('list, show, pause, resume and cancel broadcasts')
    .showHelpAfterError('(add --help for usage)');

  withStoreOptions(
    broadcast
      .command('list')
      .description('broadcasts of a bot, or of every bot of the config, newest first')
      .option('--bot <bot>', 'only the broadcasts of this bot')
      .option('--limit <n>', `broadcasts to print (1-${MAX_LIMIT})`, parseLimit, 50)
      .option(
        '--json',
        'print JSON: { items } with what GET .../broadcasts/:id answers and the bot',
      ),
  ).action((options: ListOptions) =>
    withQueue('broadcast list', options, (ctx, config) => list(ctx, config, options)),
  );

  withStoreOptions(
    broadcast
      .command('show')
      .description('a broadcast: its totals, progress, rate and estimated finish')
      .argument('<id>', 'the id the gateway answered (202 {"id": ...})')
      .option('--bot <bot>', "the broadcast's bot (default: look in every bot of the config)")
      .option('--json', 'print JSON: what GET /api/v1/:botId/broadcasts/:id answers'),
  ).action((id: string, options: ShowOptions) =>
    withQueue('broadcast show', options, (ctx, config) => show(ctx, config, id, options)),
  );

  for (const action of Object.keys(CONTROL_HELP) as BroadcastAction[]) {
    withStoreOptions(
      broadcast
        .command(action)
        .description(CONTROL_HELP[action])
        .argument('<id>', 'the broadcast id')
        .option('--bot <bot>', "the broadcast's bot (default: look in every bot of the config)"),
    ).action((id: string, options: BotOptions) =>
      withQueue(`broadcast ${action}`, options, (ctx, config) =>
        control(ctx, config, id, action, options),
      ),
    );
  }
}

function parseLimit(raw: string): number {
  const limit = Number(raw);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new InvalidArgumentError(`must be a whole number from 1 to ${MAX_LIMIT}`);
  }
  return limit;
}

/** The bots to look in: the one named (which must be in the config), or every one. */
function botsOf(config: RelaygramConfig, bot: string | undefined): string[] {
  const bots = config.bots.map((b) => b.id);
  if (bot !== undefined && !bots.includes(bot)) {
    throw new UsageError(`unknown bot "${bot}" (the config has: ${bots.join(', ') || 'none'})`);
  }
  return bot === undefined ? bots : [bot];
}

async function list(ctx: QueueContext, config: RelaygramConfig, options: ListOptions) {
  const store = new BroadcastStore(ctx);
  const perBot = await Promise.all(
    botsOf(config, options.bot).map((bot) => store.list(bot, 0, options.limit)),
  );
  // Each bot's page is newest first; the newest `limit` of all are among them.
  const records = perBot
    .flat()
    .sort((a, b) => b.createdAt - a.createdAt)
    .slice(0, options.limit);
  if (options.json) {
    const now = Date.now();
    const items = records.map((record) => ({ bot: record.bot, ...broadcastView(record, now) }));
    process.stdout.write(`${JSON.stringify({ items }, null, 2)}\n`);
    return 0;
  }
  if (!records.length) {
    process.stdout.write('no broadcasts\n');
    return 0;
  }
  const rows = [
    ['ID', 'BOT', 'STATUS', 'PROGRESS', 'SENT', 'BLOCKED', 'FAILED', 'CREATED'],
    ...records.map((record) => [
      printable(record.id),
      record.bot,
      record.status,
      progress(record),
      String(record.sent),
      String(record.blocked),
      String(record.failed),
      new Date(record.createdAt).toISOString(),
    ]),
  ];
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  for (const row of rows) {
    const line = row.map((cell, i) => cell.padEnd(widths[i])).join('  ');
    process.stdout.write(`${line.trimEnd()}\n`);
  }
  return 0;
}

async function show(
  ctx: QueueContext,
  config: RelaygramConfig,
  id: string,
  options: ShowOptions,
): Promise<number> {
  const record = await find(new BroadcastStore(ctx), config, id, options.bot);
  const now = Date.now();
  if (options.json) {
    process.stdout.write(`${JSON.stringify(broadcastView(record, now), null, 2)}\n`);
    return 0;
  }
  process.stdout.write(`${broadcastLines(record, now).join('\n')}\n`);
  return 0;
}

/**
 * The control script decides, so a status changed since `find` read it (a broadcast
 * that finished meanwhile) is refused with the status it has now.
 */
async function control(
  ctx: QueueContext,
  config: RelaygramConfig,
  id: string,
  action: BroadcastAction,
  options: BotOptions,
): Promise<number> {
  const store = new BroadcastStore(ctx);
  const { bot } = await find(store, config, id, options.bot);
  const result = await store.control(bot, id, action);
  if (result.status === 'missing') throw notFound(id);
  if (!result.ok) {
    throw new UsageError(`the broadcast is ${result.status}: it cannot be ${DONE_TO[action]}`);
  }
  process.stdout.write(`broadcast ${printable(id)} of ${bot}: ${result.status}\n`);
  return 0;
}

/**
 * A broadcast is kept per bot (`broadcast:<bot>:<id>`) and its id does not say its bot,
 * so without --bot every configured bot is asked, as `relaygram outbox show` does.
 */
async function find(
  store: BroadcastStore,
  config: RelaygramConfig,
  id: string,
  bot: string | undefined,
): Promise<BroadcastRecord> {
  const read = await Promise.all(botsOf(config, bot).map((b) => store.read(b, id)));
  const found = read.filter((record): record is BroadcastRecord => record !== undefined);
  if (!found.length) throw notFound(id);
  if (found.length > 1) {
    const holders = found.map((record) => record.bot).join(', ');
    throw new UsageError(`broadcast ${printable(id)} is in bots ${holders}: name one with --bot`);
  }
  return found[0];
}

function notFound(id: string): UsageError {
  return new UsageError(
    `no broadcast ${printable(id)} (broadcasts are kept ${KEPT_DAYS} days after they end)`,
  );
}

/** The broadcast as label and value lines, from the view `--json` prints, then its pace. */
function broadcastLines(record: BroadcastRecord, now: number): string[] {
  const view = broadcastView(record, now);
  const rows: [string, string][] = [
    ['id', printable(view.id)],
    ['bot', record.bot],
    ['client', printable(record.client)],
    ['method', printable(view.method) || '-'],
    ['status', view.status],
  ];
  if (view.paused_reason !== undefined) rows.push(['why', printable(view.paused_reason)]);
  rows.push(
    ['progress', progress(record)],
    ['sent', String(view.sent)],
    ['blocked', String(view.blocked)],
    ['failed', String(view.failed)],
    ['pending', String(view.pending)],
    ['created', view.created_at],
  );
  if (view.started_at !== undefined) rows.push(['started', view.started_at]);
  if (view.finished_at !== undefined) rows.push(['finished', view.finished_at]);
  rows.push(['rate', pace(view.rate, view.status, view.estimated_finish_at, now)]);
  return rows.map(([label, value]) => `${label.padEnd(LABEL_WIDTH)}${value}`);
}

/** `settled/total pct%`, the percentage rounded down: 100% means every recipient settled. */
function progress(record: BroadcastRecord): string {
  const settled = record.sent + record.blocked + record.failed;
  const percent = record.total > 0 ? `${Math.floor((settled * 100) / record.total)}%` : '-';
  return `${settled}/${record.total} ${percent}`;
}

/** The rate, and when a running broadcast should finish at it (or why there is no estimate). */
function pace(
  rate: number,
  status: BroadcastRecord['status'],
  estimate: string | undefined,
  now: number,
): string {
  const perSecond = `${rate}/s`;
  if (estimate !== undefined) {
    return `${perSecond}, estimated finish ${estimate} (in ${duration(Date.parse(estimate) - now)})`;
  }
  if (status === 'running') return `${perSecond}, no estimate before the first sends settle`;
  if (status === 'paused') return `${perSecond}, no estimate while paused`;
  if (status === 'loading') return `${perSecond}, not started: its recipients are still arriving`;
  return perSecond;
}

/** A wait in its two largest units: `45s`, `3m 20s`, `2h 5m`, `1d 4h`. */
function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  const parts: [number, string][] = [
    [Math.floor(s / 86_400), 'd'],
    [Math.floor(s / 3_600) % 24, 'h'],
    [Math.floor(s / 60) % 60, 'm'],
    [s % 60, 's'],
  ];
  const first = parts.findIndex(([n]) => n > 0);
  if (first < 0) return '0s';
  return parts
    .slice(first, first + 2)
    .filter(([n]) => n > 0)
    .map(([n, unit]) => `${n}${unit}`)
    .join(' ');
}
