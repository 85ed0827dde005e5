import { InvalidArgumentError, type Command } from 'commander';
import { request } from 'undici';
import { errorMessage } from '@relaygram/contracts';

interface StatusOptions {
  url: string;
  json?: boolean;
  timeout: number;
}

interface BotRow {
  id?: unknown;
  mode?: unknown;
  polling?: unknown;
  healthy?: unknown;
  queue?: unknown;
  dead?: unknown;
  problem?: unknown;
  pull_routes?: PullRouteRow[];
}

interface PullRouteRow {
  route?: unknown;
  client?: unknown;
  pending?: unknown;
  last_polled_at?: unknown;
  stale?: unknown;
}

interface Healthz {
  status?: unknown;
  service?: unknown;
  polling?: unknown;
  error?: unknown;
  bots?: BotRow[];
}

/** Exit codes: scripts tell a degraded install from one that cannot be reached. */
export const STATUS_EXIT = Object.freeze({ ok: 0, degraded: 1, unreachable: 2 });

const DEFAULT_URL = 'http://127.0.0.1:3000';

/** `relaygram status`: a running install's /healthz as a table. */
export function registerStatusCommand(program: Command): void {
  program
    .command('status')
    .helpGroup('Running install:')
    .description(
      "show a running install's health (its /healthz): each bot's mode, poller, health, queue and dead letters, and each pull route's pending updates and last poll",
    )
    .option(
      '--url <url>',
      'base URL of any Relaygram app, public or management port',
      parseUrl,
      DEFAULT_URL,
    )
    .option('--json', 'print the /healthz JSON as received')
    .option('--timeout <ms>', 'give up after this many milliseconds', parseTimeout, 5000)
    .addHelpText(
      'after',
      '\nExit status: 0 ok, 1 degraded (a bot unhealthy, a pull route stale, or Redis not answering), 2 not reachable.\n',
    )
    .action(async (options: StatusOptions) => {
      process.exitCode = await status(options);
    });
}

function parseTimeout(raw: string): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1)
    throw new InvalidArgumentError('not a positive integer');
  return value;
}

function parseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new InvalidArgumentError('not a URL (e.g. http://127.0.0.1:3000)');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new InvalidArgumentError('not an http(s) URL');
  return raw;
}

/** The base URL, or a URL already ending in /healthz. */
function healthzUrl(raw: string): URL {
  const url = new URL(raw);
  if (!url.pathname.endsWith('/healthz'))
    url.pathname = `${url.pathname.replace(/\/+$/, '')}/healthz`;
  return url;
}

async function status(options: StatusOptions): Promise<number> {
  const url = healthzUrl(options.url);
  let code: number;
  let body: Healthz;
  try {
    const res = await request(url, {
      headersTimeout: options.timeout,
      bodyTimeout: options.timeout,
      headers: { accept: 'application/json' },
    });
    code = res.statusCode;
    const text = await res.body.text();
    body = JSON.parse(text) as Healthz;
    if (!body || typeof body !== 'object' || !Array.isArray(body.bots)) throw new Error('no bots');
  } catch (error) {
    const reason =
      error instanceof SyntaxError || (error instanceof Error && error.message === 'no bots')
        ? 'the answer is not Relaygram /healthz JSON'
        : errorMessage(error);
    process.stderr.write(`relaygram status: ${url.origin}: ${reason}\n`);
    return STATUS_EXIT.unreachable;
  }

  if (options.json) process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
  else process.stdout.write(`${render(url, code, body)}\n`);
  return code === 200 && body.status === 'ok' ? STATUS_EXIT.ok : STATUS_EXIT.degraded;
}

function text(value: unknown): string {
  if (value === undefined || value === null) return '-';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  return String(value);
}

function render(url: URL, code: number, body: Healthz): string {
  const state = code === 503 ? `${text(body.status)}: ${text(body.error)}` : text(body.status);
  const lines = [
    `${text(body.service)} at ${url.origin}: ${state}${body.polling ? ' (polling)' : ''}`,
  ];
  const bots = body.bots ?? [];
  if (!bots.length) {
    lines.push('no bots configured');
    return lines.join('\n');
  }
  lines.push(
    ...table(
      ['BOT', 'MODE', 'POLLING', 'HEALTHY', 'QUEUE', 'DEAD', 'PROBLEM'],
      bots.map((bot) => [
        text(bot.id),
        text(bot.mode),
        text(bot.polling),
        text(bot.healthy),
        text(bot.queue),
        text(bot.dead),
        bot.problem === undefined ? '' : text(bot.problem),
      ]),
    ),
  );
  const pulls = bots.flatMap((bot) =>
    Array.isArray(bot.pull_routes) ? bot.pull_routes.map((route) => ({ bot, route })) : [],
  );
  if (pulls.length) {
    lines.push(
      '',
      ...table(
        ['PULL ROUTE', 'BOT', 'CLIENT', 'PENDING', 'LAST POLL', 'STALE'],
        pulls.map(({ bot, route }) => [
          text(route.route),
          text(bot.id),
          text(route.client),
          text(route.pending),
          route.last_polled_at === null ? 'never' : text(route.last_polled_at),
          text(route.stale),
        ]),
      ),
    );
  }
  return lines.join('\n');
}

/** Columns padded to their widest cell; the last one is left as it is. */
function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const format = (cells: string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [format(header), ...rows.map(format)];
}
