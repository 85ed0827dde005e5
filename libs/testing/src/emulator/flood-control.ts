import type { FloodLimits, FloodStats } from './emulator.types';
import type { TelegramParams } from './telegram-params';

const GROUP_WINDOW_MS = 60_000;

/**
 * The calls Telegram's flood limits count: what sends a message (send*, but not
 * sendChatAction), copies, forwards or edits one.
 */
export function isFloodLimited(method: string): boolean {
  const lower = method.toLowerCase();
  if (lower.startsWith('send')) return lower !== 'sendchataction';
  return (
    lower.startsWith('editmessage') ||
    lower === 'copymessage' ||
    lower === 'copymessages' ||
    lower === 'forwardmessage' ||
    lower === 'forwardmessages'
  );
}

/** A token bucket as one number (GCRA): `capacity` sends, one more every `intervalMs`. */
class Bucket {
  private tat = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly intervalMs: number,
    private readonly capacity: number,
  ) {}

  /** 0 when a send fits now, else how long until it would. */
  waitMs(now: number): number {
    const allowedAt = this.tat - (this.capacity - 1) * this.intervalMs;
    return Math.max(0, allowedAt - now);
  }

  take(now: number): void {
    this.tat = Math.max(this.tat, now) + this.intervalMs;
  }
}

/** At most `limit` sends in any window of `windowMs`. */
class SlidingWindow {
  private readonly times: number[] = [];

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  waitMs(now: number): number {
    while (this.times.length && (this.times[0] as number) <= now - this.windowMs)
      this.times.shift();
    if (this.times.length < this.limit) return 0;
    return (this.times[this.times.length - this.limit] as number) + this.windowMs - now;
  }

  take(now: number): void {
    this.times.push(now);
    if (this.times.length > this.limit) this.times.shift();
  }
}

/**
 * A bot's flood limits as the emulator enforces them, on its own clock (the arrival
 * time of each call): per bot a bucket of `perSecond` sends refilled at `perSecond`;
 * per chat a bucket of `chatBurst` refilled at `perChatPerSecond`; per group or
 * channel (ids below 0, `@username`) at most `perGroupPerMinute` in any 60 s. A call
 * over any of them is answered 429 with `retry_after` (whole seconds until it would
 * fit) and counts against none.
 */
export class FloodControl {
  private readonly bot?: Bucket;
  private readonly chats = new Map<string, Bucket>();
  private readonly groups = new Map<string, SlidingWindow>();
  private accepted = 0;
  private limited = 0;
  private readonly limitedBy = { bot: 0, chat: 0, group: 0 };

  constructor(readonly limits: FloodLimits) {
    if (limits.perSecond !== undefined) {
      this.bot = new Bucket(1000 / limits.perSecond, Math.max(1, Math.floor(limits.perSecond)));
    }
  }

  /** The retry_after of a call over a limit, or undefined when it is let through (and counted). */
  check(method: string, params: TelegramParams, now: number): number | undefined {
    if (!isFloodLimited(method)) return undefined;
    const chat = chatKey(params['chat_id']);
    const chatBucket = chat === undefined ? undefined : this.chatBucket(chat);
    const group = chat !== undefined && /^[-@]/.test(chat) ? this.groupWindow(chat) : undefined;
    const waits: [keyof FloodControl['limitedBy'], number][] = [
      ['bot', this.bot?.waitMs(now) ?? 0],
      ['chat', chatBucket?.waitMs(now) ?? 0],
      ['group', group?.waitMs(now) ?? 0],
    ];
    const [scope, wait] = waits.reduce((a, b) => (b[1] > a[1] ? b : a));
    if (wait > 0) {
      this.limited++;
      this.limitedBy[scope]++;
      return Math.max(1, Math.ceil(wait / 1000));
    }
    this.bot?.take(now);
    chatBucket?.take(now);
    group?.take(now);
    this.accepted++;
    return undefined;
  }

  stats(): FloodStats {
    return {
      limits: { ...this.limits },
      accepted: this.accepted,
      limited: this.limited,
      limitedBy: { ...this.limitedBy },
    };
  }

  private chatBucket(chat: string): Bucket | undefined {
    const { perChatPerSecond, chatBurst } = this.limits;
    if (perChatPerSecond === undefined) return undefined;
    let bucket = this.chats.get(chat);
    if (!bucket) {
      bucket = new Bucket(1000 / perChatPerSecond, chatBurst ?? 1);
      this.chats.set(chat, bucket);
    }
    return bucket;
  }

  private groupWindow(chat: string): SlidingWindow | undefined {
    const { perGroupPerMinute } = this.limits;
    if (perGroupPerMinute === undefined) return undefined;
    let window = this.groups.get(chat);
    if (!window) {
      window = new SlidingWindow(perGroupPerMinute, GROUP_WINDOW_MS);
      this.groups.set(chat, window);
    }
    return window;
  }
}

function chatKey(chatId: unknown): string | undefined {
  if (typeof chatId === 'number' && Number.isFinite(chatId)) return String(chatId);
  if (typeof chatId === 'string' && chatId.trim() !== '') {
    const text = chatId.trim();
    return text.startsWith('@') ? text.toLowerCase() : text;
  }
  return undefined;
}

/** Checks limits that may come from JSON; throws a TypeError naming the bad field. */
export function validateFloodLimits(value: unknown): FloodLimits | null {
  if (value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new TypeError('flood limits: not an object (or null to lift them)');
  }
  const limits = value as Record<string, unknown>;
  const known = ['perSecond', 'perChatPerSecond', 'chatBurst', 'perGroupPerMinute'];
  for (const key of Object.keys(limits)) {
    if (!known.includes(key)) throw new TypeError(`flood limits: unknown field ${key}`);
    const field = limits[key];
    if (typeof field !== 'number' || !(field > 0) || !Number.isFinite(field)) {
      throw new TypeError(`flood limits: ${key} must be a number above 0`);
    }
  }
  if (limits['chatBurst'] !== undefined && !Number.isInteger(limits['chatBurst'])) {
    throw new TypeError('flood limits: chatBurst must be an integer');
  }
  if (limits['perGroupPerMinute'] !== undefined && !Number.isInteger(limits['perGroupPerMinute'])) {
    throw new TypeError('flood limits: perGroupPerMinute must be an integer');
  }
  return limits as FloodLimits;
}
