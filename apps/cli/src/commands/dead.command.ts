import { Option, type Command } from 'commander';
import type { RelaygramConfig } from '@relaygram/config';
import { DEAD_REASONS, type DeadReason } from '@relaygram/contracts';
import {
  DeadLetterStore,
  DrainScheduler,
  deadLetterView,
  laneResolverFor,
  type DeadLetter,
  type DeadLetterFilter,
} from '@relaygram/queue';
import { UsageError, withQueue, withStoreOptions, type StoreOptions } from './queue-session';

interface FilterOptions {
  route?: string;
  bot?: string;
  reason?: DeadReason;
}

interface ListOptions extends StoreOptions, FilterOptions {
  limit: string;
  cursor?: string;
  json?: boolean;
}

interface BulkOptions extends StoreOptions, FilterOptions {
  all?: boolean;
}

/** `relaygram dead ...`: list, re-send and delete dead letters (SPEC section 5). */
export function registerDeadCommands(program: Command): void {
  const dead = program
    .command('dead')
    .helpGroup('Deliveries:')
    .description('list, re-send and delete dead letters (deliveries that gave up)')
    .showHelpAfterError('(add --help for usage)');

  withStoreOptions(
    withFilterOptions(
      dead
        .command('list')
        .description('list dead letters, newest first')
        .option('--limit <n>', 'letters per page (1-500)', '50')
        .option('--cursor <cursor>', 'continue after a previous page (printed at its end)')
        .option('--json', 'print JSON: { items, next_cursor }'),
    ),
  ).action((options: ListOptions) => withStore(options, (store) => list(store, options)));

  withStoreOptions(
    withFilterOptions(
      dead
        .command('replay')
        .description(
          "re-send dead letters to the tail of their lanes, with the route's current config: the ids given, or every letter matching the filters (--all for every letter)",
        )
        .argument('[delivery-ids...]', 'delivery ids to re-send')
        .option('--all', 're-send every dead letter matching the filters (or every one)'),
    ),
  ).action((ids: string[], options: BulkOptions) =>
    withStore(options, (store, config) => replay(store, config, ids, options)),
  );

  withStoreOptions(
    withFilterOptions(
      dead
        .command('delete')
        .description(
          'delete dead letters: the ids given, or every letter matching the filters (--all for every letter)',
        )
        .argument('[delivery-ids...]', 'delivery ids to delete')
        .option('--all', 'delete every dead letter matching the filters (or every one)'),
    ),
  ).action((ids: string[], options: BulkOptions) =>
    withStore(options, (store) => remove(store, ids, options)),
  );
}

function withFilterOptions(command: Command): Command {
  return command
    .option('--route <route>', 'only letters of this route')
    .option('--bot <bot>', 'only letters of this bot')
    .addOption(
      new Option('--reason <reason>', 'only letters that died for this reason').choices(
        DEAD_REASONS,
      ),
    );
}

type StoreAction = (store: DeadLetterStore, config: RelaygramConfig) => Promise<number>;

/** Runs the action on the dead letters, its drain scheduler closed afterwards. */
function withStore(options: StoreOptions, action: StoreAction): Promise<void> {
  return withQueue('dead', options, async (ctx, config) => {
    const scheduler = new DrainScheduler(ctx);
    try {
      return await action(new DeadLetterStore(ctx, scheduler), config);
    } finally {
      await scheduler.close().catch(() => undefined);
    }
  });
}

function filterOf(options: FilterOptions): DeadLetterFilter {
  return { route: options.route, bot: options.bot, reason: options.reason };
}

function hasFilter(options: FilterOptions): boolean {
  return Boolean(options.route || options.bot || options.reason);
}

async function list(store: DeadLetterStore, options: ListOptions): Promise<number> {
  const limit = Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) {
    throw new UsageError('--limit: must be a whole number from 1 to 500');
  }
  const page = await store.list(filterOf(options), limit, options.cursor);
  if (options.json) {
    const body = { items: page.items.map(deadLetterView), next_cursor: page.nextCursor ?? null };
    process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
    return 0;
  }
  if (!page.items.length) {
    process.stdout.write('no dead letters\n');
    return 0;
  }
  const rows = [
    ['DELIVERY ID', 'ROUTE', 'BOT', 'UPDATE', 'REASON', 'ATTEMPTS', 'STATUS', 'DIED AT'],
    ...page.items.map((letter) => [
      letter.deliveryId,
      letter.route,
      letter.bot,
      String(letter.updateId),
      letter.reason,
      String(letter.attempts),
      letter.lastStatus === undefined ? '-' : String(letter.lastStatus),
      new Date(letter.deadAt).toISOString(),
    ]),
  ];
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  for (const row of rows) {
    process.stdout.write(
      `${row
        .map((cell, i) => cell.padEnd(widths[i]))
        .join('  ')
        .trimEnd()}\n`,
    );
  }
  if (page.nextCursor) process.stdout.write(`more: add --cursor ${page.nextCursor}\n`);
  return 0;
}

async function replay(
  store: DeadLetterStore,
  config: RelaygramConfig,
  ids: string[],
  options: BulkOptions,
): Promise<number> {
  const resolver = laneResolverFor(config);
  if (ids.length) {
    if (hasFilter(options) || options.all) {
      throw new UsageError(
        'give delivery ids or filters (--route, --bot, --reason, --all), not both',
      );
    }
    let failed = 0;
    for (const id of ids) {
      const outcome = await store.replay(id, resolver);
      if (outcome === 'queued') process.stdout.write(`queued ${id}\n`);
      else {
        failed += 1;
        const why = outcome === 'missing' ? 'no such dead letter' : outcome.error;
        process.stderr.write(`not re-sent ${id}: ${why}\n`);
      }
    }
    return failed ? 1 : 0;
  }
  requireSelection(options, 're-send');
  const result = await store.replayAll(filterOf(options), resolver, (_done, outcome, id) => {
    if (typeof outcome === 'object') process.stderr.write(`not re-sent ${id}: ${outcome.error}\n`);
  });
  process.stdout.write(`re-sent ${result.queued}, not re-sent ${result.failed}\n`);
  return result.failed ? 1 : 0;
}

async function remove(
  store: DeadLetterStore,
  ids: string[],
  options: BulkOptions,
): Promise<number> {
  if (ids.length) {
    if (hasFilter(options) || options.all) {
      throw new UsageError(
        'give delivery ids or filters (--route, --bot, --reason, --all), not both',
      );
    }
    let missing = 0;
    for (const id of ids) {
      if (await store.delete(id)) process.stdout.write(`deleted ${id}\n`);
      else {
        missing += 1;
        process.stderr.write(`not deleted ${id}: no such dead letter\n`);
      }
    }
    return missing ? 1 : 0;
  }
  requireSelection(options, 'delete');
  const matching: DeadLetter[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list(filterOf(options), 500, cursor);
    matching.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  let deleted = 0;
  for (const letter of matching) if (await store.delete(letter.deliveryId)) deleted += 1;
  process.stdout.write(`deleted ${deleted}\n`);
  return 0;
}

/** A bulk action needs a filter, or --all to mean every letter. */
function requireSelection(options: BulkOptions, verb: string): void {
  if (!hasFilter(options) && !options.all) {
    throw new UsageError(
      `name the delivery ids to ${verb}, or select with --route, --bot, --reason or --all`,
    );
  }
}
