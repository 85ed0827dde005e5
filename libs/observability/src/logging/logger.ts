import type { LoggerService, LogLevel as NestLogLevel } from '@nestjs/common';
import pino, { type Logger } from 'pino';
import type { LogLevel } from '@relaygram/config';
import { currentRequestContext } from './request-context';

const SECRET_HEADERS = [
  'authorization',
  'cookie',
  'x-telegram-bot-api-secret-token',
  'x-service-token',
  'x-webhook-signature',
  'webhook-signature',
];
const SECRET_FIELDS = [
  'token',
  'secret',
  'authorization',
  'secret_token',
  'secretToken',
  'admin_token',
  'adminToken',
  'signing_secret',
  'signingSecret',
  'service_token',
  'serviceToken',
];

/**
 * Every place a secret could reach a log line: headers that carry tokens and
 * signatures, fields named like secrets, and URLs (the Bot API drop-in path holds a
 * client token: `/bot<id>:<token>/...`). Paths ending in `url` or `path` keep their
 * value with the token masked; the others become `***`.
 *
 * Explicit paths only: a wildcard (`*.token`) makes pino walk every line and cost
 * several times the line itself. Secrets from the config are `Secret` objects, which
 * print as `***` wherever they are nested, and the final text filter (redactText)
 * masks bot tokens and drop-in paths anywhere in a line.
 */
export const REDACT_PATHS = [
  ...['req.headers', 'request.headers', 'headers'].flatMap((parent) =>
    SECRET_HEADERS.map((header) => `${parent}["${header}"]`),
  ),
  ...SECRET_FIELDS,
  ...SECRET_FIELDS.map((field) => `route.${field}`),
  ...SECRET_FIELDS.map((field) => `client.${field}`),
  'url',
  'path',
  'req.url',
  'request.url',
];

// `/bot123:SECRET/sendMessage` and `/file/bot123:SECRET/...` keep only `/bot123:` and a
// mask. Whatever follows the digits in that segment is masked, however it is spelled
// (`%3A` for the colon, `/Bot` for `/bot`): a request need not be a valid drop-in call
// to carry a token.
const BOT_TOKEN_IN_PATH = /(\/(?:file\/)?bot\d+)[^/?#\s"]+/gi;
// A token anywhere else in a line: `123456:AA...` with 16+ characters after the colon
// (client tokens in drop-in tokens may be that short), the colon possibly encoded.
const BOT_TOKEN = /(?<![0-9])(\d{3,})(?::|%3a)[A-Za-z0-9_-]{16,}/gi;

export function redactUrl(url: string): string {
  return url.replace(BOT_TOKEN_IN_PATH, '$1:***');
}

/**
 * A URL fit to show in an answer or a page: no user info, bot tokens in the path
 * masked, the query (which may hold a key) reduced to `?…`.
 */
export function displayUrl(raw: string): string {
  if (raw === '') return '';
  try {
    const url = new URL(raw);
    const query = url.search ? '?…' : '';
    return `${url.protocol}//${url.host}${redactUrl(url.pathname)}${query}`;
  } catch {
    return redactUrl(raw).replace(/\?.*$/, '?…');
  }
}

/**
 * Secret values of the config and environment this process was given (longest first),
 * masked in every line whatever field or text they hide in. Only added to: several apps
 * may share a process (tests, the standalone), and a secret a reload dropped still
 * deserves masking.
 */
let configuredSecrets: string[] = [];

/** Short values would mask ordinary words; every configured secret is longer. */
const MIN_MASKED_LENGTH = 8;

export function maskSecrets(values: Iterable<string>): void {
  const all = new Set(configuredSecrets);
  for (const value of values) {
    if (value.length < MIN_MASKED_LENGTH) continue;
    all.add(value);
    // As it would appear in a URL's query or a form body.
    all.add(encodeURIComponent(value));
  }
  configuredSecrets = [...all].sort((a, b) => b.length - a.length);
}

/**
 * Masks bot tokens, drop-in paths and every configured secret in any text: the last
 * filter before a line is written.
 */
export function redactText(text: string): string {
  let out = redactUrl(text).replace(BOT_TOKEN, '$1:***');
  for (const secret of configuredSecrets) {
    if (out.includes(secret)) out = out.split(secret).join('***');
  }
  return out;
}

/**
 * A request URL fit for a log line: the path with any drop-in token masked, and the
 * query's keys without their values (a client may put a secret there: `?token=...`).
 */
export function logUrl(url: string): string {
  const question = url.indexOf('?');
  if (question < 0) return redactUrl(url);
  const keys = url
    .slice(question + 1)
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair) => {
      const eq = pair.indexOf('=');
      return `${eq < 0 ? pair : pair.slice(0, eq)}=***`;
    });
  return `${redactUrl(url.slice(0, question))}?${keys.join('&')}`;
}

function censor(value: unknown, path: string[]): unknown {
  const key = path[path.length - 1];
  if ((key === 'url' || key === 'path') && typeof value === 'string') return redactUrl(value);
  if (key === 'url' || key === 'path') return value;
  return '***';
}

export interface LoggerOptions {
  level: LogLevel;
  service: string;
  /** Human-readable lines instead of JSON (default: when stdout is a terminal). */
  pretty?: boolean;
  /** Where to write; stdout by default (tests capture lines here). */
  destination?: NodeJS.WritableStream;
}

/** Lines written while serving a request carry its id. */
function requestFields(): Record<string, unknown> {
  const context = currentRequestContext();
  return context ? { req_id: context.reqId } : {};
}

/**
 * pino's error serializer copies every enumerable field of an error. A Redis error
 * carries the failed command with its arguments (update payloads, delivery bodies):
 * the command's name says enough, the arguments stay out of the log.
 */
export function serializeError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const out = pino.stdSerializers.err(error) as ReturnType<typeof pino.stdSerializers.err> & {
    command?: unknown;
  };
  if (out.command && typeof out.command === 'object') {
    out.command = { name: (out.command as { name?: unknown }).name };
  }
  return out;
}

export function createLogger(options: LoggerOptions): Logger {
  const pretty = options.pretty ?? Boolean(process.stdout.isTTY);
  const base = {
    level: options.level,
    base: { service: options.service },
    redact: { paths: REDACT_PATHS, censor },
    serializers: { err: serializeError },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
    mixin: requestFields,
    hooks: { streamWrite: redactText },
  };
  if (options.destination) return pino(base, options.destination as pino.DestinationStream);
  if (pretty) {
    return pino({
      ...base,
      transport: {
        target: 'pino-pretty',
        options: {
          colorize: true,
          translateTime: 'SYS:HH:MM:ss.l',
          ignore: 'pid,hostname,service',
        },
      },
    });
  }
  // Lines are written in 4 KiB batches rather than one write(2) each: on the webhook
  // path a synchronous write per line cost as much as the Redis round trip. What a
  // kill -9 can lose is the last few lines, never queued data; a graceful stop flushes.
  const destination = pino.destination({ sync: false, minLength: 4096 });
  // A quiet process still shows its lines within a second.
  setInterval(() => {
    try {
      destination.flush();
    } catch {
      // not open yet, or closing: the next tick or the exit flush writes the lines
    }
  }, 1000).unref();
  return pino(base, destination);
}

const NEST_TO_PINO: Record<NestLogLevel, pino.Level> = {
  verbose: 'trace',
  debug: 'debug',
  log: 'info',
  warn: 'warn',
  error: 'error',
  fatal: 'fatal',
};

/** Nest's start-up chatter (one line per module and route) is debug, not info. */
const QUIET_CONTEXTS = new Set([
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestFactory',
  'NestApplication',
]);

/** Nest's logger interface over pino, so framework and Relaygram lines share one format. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, ...rest: unknown[]): void {
    this.write('log', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('verbose', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }

  private write(level: NestLogLevel, message: unknown, rest: unknown[]): void {
    // Nest passes the context (class name) last, and for errors the stack before it.
    const args = [...rest];
    const context = typeof args[args.length - 1] === 'string' ? (args.pop() as string) : undefined;
    const pinoLevel =
      level === 'log' && context && QUIET_CONTEXTS.has(context) ? 'debug' : NEST_TO_PINO[level];
    if (!this.logger.isLevelEnabled(pinoLevel)) return;
    const stack =
      level === 'error' && typeof args[0] === 'string' ? (args.shift() as string) : undefined;
    const fields: Record<string, unknown> = {};
    if (context) fields.context = context;
    if (stack) fields.stack = stack;
    if (message instanceof Error) {
      fields.err = message;
      this.logger[pinoLevel](fields, message.message);
    } else if (typeof message === 'object' && message !== null) {
      const { msg, ...rest } = message as Record<string, unknown>;
      this.logger[pinoLevel]({ ...fields, ...rest }, typeof msg === 'string' ? msg : '');
    } else {
      this.logger[pinoLevel](fields, String(message));
    }
  }
}
