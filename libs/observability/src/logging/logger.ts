import type { LoggerService, LogLevel as NestLogLevel } from '@nestjs/common';
import pino, { type Logger } from 'pino';
import type { LogLevel } from '@relaygram/config';

/**
 * Every place a secret could reach a log line: headers that carry tokens and
 * signatures, and request paths of the Bot API drop-in (`/bot<id>:<token>/...`).
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-telegram-bot-api-secret-token"]',
  'req.headers["x-service-token"]',
  'req.headers["x-webhook-signature"]',
  'req.headers["webhook-signature"]',
  'req.headers.cookie',
  'headers.authorization',
  'headers["x-telegram-bot-api-secret-token"]',
  'headers["x-service-token"]',
  'headers["x-webhook-signature"]',
  'headers["webhook-signature"]',
  '*.token',
  '*.secret',
  '*.secretToken',
  '*.signingSecret',
  '*.serviceToken',
];

// `/bot123:SECRET/sendMessage` and `/file/bot123:SECRET/...` keep only `/bot123:` and a mask.
const BOT_TOKEN_IN_PATH = /(\/(?:file\/)?bot\d+):[^/?#\s]+/g;

export function redactUrl(url: string): string {
  return url.replace(BOT_TOKEN_IN_PATH, '$1:***');
}

export interface LoggerOptions {
  level: LogLevel;
  service: string;
  /** Human-readable lines instead of JSON (default: when stdout is a terminal). */
  pretty?: boolean;
  /** Where to write; stdout by default (tests capture lines here). */
  destination?: NodeJS.WritableStream;
}

export function createLogger(options: LoggerOptions): Logger {
  const pretty = options.pretty ?? Boolean(process.stdout.isTTY);
  const base = {
    level: options.level,
    base: { service: options.service },
    redact: { paths: REDACT_PATHS, censor: '***' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
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
  return pino(base);
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
