import { randomBytes, randomInt } from 'node:crypto';
import { BotState, type BotStateOptions } from './bot-state';
import type { AddBotOptions, BotIdentity, BotRef } from './emulator.types';

const TOKEN_PATTERN = /^(\d{1,20}):([A-Za-z0-9_-]{1,100})$/;
const USERNAME_PATTERN = /^[A-Za-z][A-Za-z0-9_]{3,31}$/;
const SECRET_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';

export class UnknownBotError extends Error {
  constructor(ref: BotRef) {
    super(`unknown bot: ${typeof ref === 'string' && ref.includes(':') ? maskToken(ref) : ref}`);
    this.name = 'UnknownBotError';
  }
}

/** `123:ABC...` → `123:***`, for messages that must not carry a token. */
export function maskToken(token: string): string {
  const colon = token.indexOf(':');
  return colon < 0 ? '***' : `${token.slice(0, colon)}:***`;
}

/** A token shaped like BotFather's: a 10-digit id, a colon, 35 characters starting `AA`. */
export function generateToken(): string {
  const id = randomInt(6_000_000_000, 8_000_000_000);
  const bytes = randomBytes(33);
  let secret = 'AA';
  for (const byte of bytes) secret += SECRET_ALPHABET[byte & 63];
  return `${id}:${secret}`;
}

/** The emulator's bots, found by token (hot path), numeric id or username. */
export class BotRegistry {
  private readonly byToken = new Map<string, BotState>();
  private readonly byId = new Map<number, BotState>();
  private readonly byUsername = new Map<string, BotState>();

  constructor(private readonly stateOptions: () => BotStateOptions) {}

  add(options: AddBotOptions = {}): BotState {
    const token = options.token ?? this.freshToken();
    const match = TOKEN_PATTERN.exec(token);
    if (!match) throw new TypeError('bot token must look like <digits>:<secret>');
    const existing = this.byToken.get(token);
    if (existing) return existing;

    const id = Number(match[1]);
    if (this.byId.has(id)) throw new Error(`a bot with id ${id} exists with another token`);
    const username = options.username?.replace(/^@/, '') ?? `emulator_${id}_bot`;
    if (!USERNAME_PATTERN.test(username)) throw new TypeError(`invalid bot username: ${username}`);
    if (this.byUsername.has(username.toLowerCase())) {
      throw new Error(`a bot named @${username} exists`);
    }
    const identity: BotIdentity = {
      token,
      id,
      username,
      firstName: options.firstName ?? 'Emulator Bot',
    };
    const bot = new BotState(identity, this.stateOptions());
    this.byToken.set(token, bot);
    this.byId.set(id, bot);
    this.byUsername.set(username.toLowerCase(), bot);
    return bot;
  }

  findByToken(token: string): BotState | undefined {
    return this.byToken.get(token);
  }

  /** A token, a numeric id (number or digits) or a username with or without `@`. */
  resolve(ref: BotRef): BotState {
    const bot =
      typeof ref === 'number'
        ? this.byId.get(ref)
        : (this.byToken.get(ref) ??
          (/^\d+$/.test(ref) ? this.byId.get(Number(ref)) : undefined) ??
          this.byUsername.get(ref.replace(/^@/, '').toLowerCase()));
    if (!bot) throw new UnknownBotError(ref);
    return bot;
  }

  all(): BotState[] {
    return [...this.byToken.values()];
  }

  clear(): void {
    this.byToken.clear();
    this.byId.clear();
    this.byUsername.clear();
  }

  private freshToken(): string {
    for (;;) {
      const token = generateToken();
      if (!this.byId.has(Number(token.split(':')[0]))) return token;
    }
  }
}
