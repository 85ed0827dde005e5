import type { Command } from 'commander';
import type { RelaygramConfig } from '@relaygram/config';
import { OUTBOX_RECORD_TTL_MS } from '@relaygram/contracts';
import {
  DrainScheduler,
  OutboxStore,
  outboxSendView,
  type OutboxRecord,
  type QueueContext,
} from '@relaygram/queue';
import { DEFAULT_WIDTH } from './delivery-log-format';
import { UsageError, withQueue, withStoreOptions, type StoreOptions } from './queue-session';
import { printable } from './terminal-text';

interface ShowOptions extends StoreOptions {
  bot?: string;
  json?: boolean;
}

/** Label column of the readable form: the longest label ("next attempt") and two spaces. */
const LABEL_WIDTH = 14;
/** The result never gets less room than this, however narrow the terminal. */
const MIN_RESULT_WIDTH = 16;
const KEPT_DAYS = OUTBOX_RECORD_TTL_MS / 86_400_000;

/** `relaygram outbox show`: one outbox send, read from Redis as the gateway's GET reads it. */
export function registerOutboxCommands(program: Command): void {
  const outbox = program
    .command('outbox')
    .helpGroup('Outbox:')
    .description('look up sends handed to the outbox')
    .showHelpAfterError('(add --help for usage)');

  withStoreOptions(
    outbox
      .command('show')
      .description("an outbox send: its status, attempts and times, and Telegram's result or error")
      .argument('<id>', 'the id the outbox answered (202 {"id": ...})')
      .option('--bot <bot>', "the send's bot (default: look in every bot of the config)")
      .option('--json', 'print JSON: what GET /api/v1/:botId/outbox/:id answers'),
  ).action((id: string, options: ShowOptions) =>
    withQueue('outbox show', options, (ctx, config) => show(ctx, config, id, options)),
  );
}

function width(): number {
  return process.stdout.isTTY && process.stdout.columns ? process.stdout.columns : DEFAULT_WIDTH;
}

async function show(
  ctx: QueueContext,
  config: RelaygramConfig,
  id: string,
  options: ShowOptions,
): Promise<number> {
  // read() never adds a drain job, so the scheduler opens no queue and needs no close.
  const store = new OutboxStore(ctx, new DrainScheduler(ctx));
  const record = await find(store, config, id, options.bot);
  if (options.json) {
    process.stdout.write(`${JSON.stringify(outboxSendView(record), null, 2)}\n`);
    return 0;
  }
  process.stdout.write(`${outboxLines(record, width()).join('\n')}\n`);
  return 0;
}

/**
 * Records are kept per bot (`outbox:<bot>:<id>`) and an id does not say its bot, so
 * without --bot every configured bot is asked. The gateway's ids are random UUIDs or
 * hashes that include the bot: one id in two bots means keys written by hand.
 */
async function find(
  store: OutboxStore,
  config: RelaygramConfig,
  id: string,
  bot: string | undefined,
): Promise<OutboxRecord> {
  const bots = config.bots.map((b) => b.id);
  if (bot !== undefined && !bots.includes(bot)) {
    throw new UsageError(`unknown bot "${bot}" (the config has: ${bots.join(', ') || 'none'})`);
  }
  const read = await Promise.all((bot === undefined ? bots : [bot]).map((b) => store.read(b, id)));
  const found = read.filter((record): record is OutboxRecord => record !== undefined);
  if (!found.length) {
    throw new UsageError(`no outbox send ${id} (outbox sends are kept ${KEPT_DAYS} days)`);
  }
  if (found.length > 1) {
    const holders = found.map((record) => record.bot).join(', ');
    throw new UsageError(`outbox send ${id} is in bots ${holders}: name one with --bot`);
  }
  return found[0];
}

/**
 * The send as label and value lines, from the same view `--json` prints. Telegram's
 * result goes on one line cut to `width`; it and the error texts come from outside, so
 * control characters print escaped instead of acting on the terminal.
 */
function outboxLines(record: OutboxRecord, width = DEFAULT_WIDTH): string[] {
  const view = outboxSendView(record);
  const rows: [string, string][] = [
    ['id', view.id],
    ['bot', record.bot],
    ['client', record.client],
    ['method', view.method],
    ['chat', String(view.chat_id)],
    ['status', view.status],
    ['attempts', String(view.attempts)],
    ['created', view.created_at],
    ['updated', view.updated_at],
  ];
  if (view.result !== undefined) {
    const room = Math.max(MIN_RESULT_WIDTH, width - LABEL_WIDTH);
    rows.push(['result', cut(printable(JSON.stringify(view.result)), room)]);
  }
  if (view.error) {
    const { error_code: code, description } = view.error;
    rows.push(['error', printable(code === undefined ? description : `${code} ${description}`)]);
  }
  if (view.last_error !== undefined) rows.push(['last error', printable(view.last_error)]);
  if (view.next_attempt_at !== undefined) rows.push(['next attempt', view.next_attempt_at]);
  if (view.migrated_to_chat_id !== undefined) {
    rows.push(['migrated to', String(view.migrated_to_chat_id)]);
  }
  return rows.map(([label, value]) => `${label.padEnd(LABEL_WIDTH)}${value}`);
}

function cut(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, Math.max(1, width - 1))}…`;
}
