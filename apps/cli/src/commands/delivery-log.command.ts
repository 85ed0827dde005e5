import { Option, type Command } from 'commander';
import {
  deliveryLogOf,
  formatDuration,
  pullRoutesOf,
  type RelaygramConfig,
} from '@relaygram/config';
import { ATTEMPT_STATUS_FILTERS, type AttemptStatusFilter } from '@relaygram/contracts';
import { DeliveryLogReader, attemptView, updateTraceView } from '@relaygram/queue';
import {
  DEFAULT_WIDTH,
  attemptLines,
  parseLimit,
  parseWhen,
  parseUpdateId,
  traceLines,
} from './delivery-log-format';
import { UsageError, withQueue, withStoreOptions, type StoreOptions } from './queue-session';

interface TraceOptions extends StoreOptions {
  json?: boolean;
}

interface AttemptsOptions extends StoreOptions {
  failed?: boolean;
  status?: AttemptStatusFilter;
  since?: number;
  until?: number;
  limit: number;
  cursor?: string;
  json?: boolean;
}

/** `relaygram trace` and `relaygram attempts`: the delivery log, read from Redis. */
export function registerDeliveryLogCommands(program: Command): void {
  withStoreOptions(
    program
      .command('trace')
      .helpGroup('Deliveries:')
      .description(
        "find an update in the delivery log: the routes it went to, each delivery's state, and every attempt with the target's status, time and answer",
      )
      .argument('<bot>', 'the bot id (as in the config)')
      .argument('<update_id>', "Telegram's update_id", parseUpdateId)
      .option('--json', 'print JSON: the admin API answer of GET /admin/api/updates/:bot/:id'),
  ).action((bot: string, updateId: number, options: TraceOptions) =>
    withQueue('trace', options, (ctx, config) =>
      trace(new DeliveryLogReader(ctx), config, bot, updateId, options),
    ),
  );

  withStoreOptions(
    program
      .command('attempts')
      .helpGroup('Deliveries:')
      .description("a route's delivery attempts, newest first, from the delivery log")
      .argument('<route>', 'the route name (as in the config)')
      .option('--failed', 'only attempts that were not answered 2xx (same as --status failed)')
      .addOption(
        new Option('--status <class>', 'only attempts with this outcome').choices(
          ATTEMPT_STATUS_FILTERS,
        ),
      )
      // A closure, not parseWhen itself: commander passes the option's previous value second.
      .option('--since <when>', 'only attempts since an age (10m, 2h, 1d) or an ISO time', (raw) =>
        parseWhen(raw),
      )
      .option('--until <when>', 'only attempts before an age (10m, 2h, 1d) or an ISO time', (raw) =>
        parseWhen(raw),
      )
      .option('--limit <n>', 'attempts per page (1-200)', parseLimit, 50)
      .option('--cursor <cursor>', 'continue after a previous page (printed at its end)')
      .option('--json', 'print JSON: { route, items, next_cursor }'),
  ).action((route: string, options: AttemptsOptions) =>
    withQueue('attempts', options, (ctx, config) =>
      attempts(new DeliveryLogReader(ctx), config, route, options),
    ),
  );
}

function width(): number {
  return process.stdout.isTTY && process.stdout.columns ? process.stdout.columns : DEFAULT_WIDTH;
}

/** What the log keeps, for the "not in the log" message (the admin API says the same). */
function keeps(config: RelaygramConfig): string {
  const log = deliveryLogOf(config);
  if (!log.enabled) return 'it is off (delivery_log.enabled: false)';
  return `it keeps updates for ${formatDuration(log.maxAgeMs)} (delivery_log.max_age) and at most ${log.updatesPerBot} per bot (delivery_log.updates_per_bot)`;
}

async function trace(
  reader: DeliveryLogReader,
  config: RelaygramConfig,
  bot: string,
  updateId: number,
  options: TraceOptions,
): Promise<number> {
  if (!config.bots.some((b) => b.id === bot)) {
    const known = config.bots.map((b) => b.id).join(', ') || 'none';
    throw new UsageError(`unknown bot "${bot}" (the config has: ${known})`);
  }
  const found = await reader.trace(bot, updateId);
  if (!found) {
    throw new UsageError(
      `update ${updateId} of bot ${bot} is not in the delivery log: ${keeps(config)}`,
    );
  }
  if (options.json) {
    process.stdout.write(`${JSON.stringify(updateTraceView(found), null, 2)}\n`);
    return 0;
  }
  process.stdout.write(`${traceLines(found, width()).join('\n')}\n`);
  return 0;
}

async function attempts(
  reader: DeliveryLogReader,
  config: RelaygramConfig,
  route: string,
  options: AttemptsOptions,
): Promise<number> {
  if (!config.routes.some((r) => r.name === route)) {
    if (pullRoutesOf(config).some((r) => r.name === route)) {
      throw new UsageError(
        `"${route}" is a pull route: its client fetches updates, nothing is delivered to it`,
      );
    }
    const known = config.routes.map((r) => r.name).join(', ') || 'none';
    throw new UsageError(`unknown route "${route}" (the config has: ${known})`);
  }
  if (options.cursor !== undefined && !/^\d+-\d+$/.test(options.cursor)) {
    throw new UsageError('--cursor: not a cursor this command printed (like 1764693000000-0)');
  }
  if (options.failed && options.status && options.status !== 'failed') {
    throw new UsageError(`give --failed or --status ${options.status}, not both`);
  }
  const page = await reader.attempts(route, {
    status: options.failed ? 'failed' : options.status,
    since: options.since,
    until: options.until,
    cursor: options.cursor,
    limit: options.limit,
  });
  if (options.json) {
    const body = { route, items: page.attempts.map(attemptView), next_cursor: page.nextCursor };
    process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
    return 0;
  }
  if (!page.attempts.length) {
    process.stdout.write(`no attempts of ${route} in the delivery log match\n`);
    return 0;
  }
  process.stdout.write(`${attemptLines(page.attempts, width()).join('\n')}\n`);
  if (page.nextCursor) process.stdout.write(`more: add --cursor ${page.nextCursor}\n`);
  return 0;
}
