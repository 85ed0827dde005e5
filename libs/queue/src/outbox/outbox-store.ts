import {
  laneId,
  OUTBOX_RECORD_TTL_MS,
  OUTBOX_ROUTE,
  type OutboxCall,
  type OutboxStatus,
} from '@relaygram/contracts';
import { encodeEntry } from '../lanes/delivery-entry';
import type { DrainScheduler } from '../lanes/drain-scheduler';
import { routePrefix } from '../lanes/drain-script-io';
import type { QueueContext } from '../queue-context';
import { OUTBOX_ENQUEUE, parseOutboxEnqueueReply } from '../scripts/outbox.lua';

/** A send handed to the outbox: the bot, the client that sent it, and the Bot API call. */
export interface OutboxSend {
  bot: string;
  client: string;
  /** Made by the caller, unique (the send's id in every answer and log line). */
  id: string;
  call: OutboxCall;
  /** `params.chat_id`: the send's lane is its bot and chat's. */
  chatId: number | string;
  createdAt?: number;
}

/** What the outbox keeps of one send, as `GET .../outbox/:id` shows it. */
export interface OutboxRecord {
  id: string;
  bot: string;
  status: OutboxStatus;
  client: string;
  method: string;
  chat: string;
  createdAt: number;
  updatedAt: number;
  /** Attempts made so far (an attempt refused by the bot's pacing counts too). */
  attempts: number;
  /** Telegram's `result` of a sent call, as JSON text. */
  result?: string;
  /** A failed send: Telegram's `error_code` and `description`, or why it was never made. */
  errorCode?: number;
  description?: string;
  /** A queued send that was tried: why its last attempt did not go through, and the next one. */
  lastError?: string;
  nextAttemptAt?: number;
  /** The group became a supergroup: the send went to this chat instead. */
  migratedTo?: string;
}

/** How an attempt on an outbox send ended, as its record keeps it. */
export type OutboxSettlement =
  | { status: 'sent'; attempts: number; result: string; migratedTo?: string }
  /** `errorCode`: Telegram's; absent when the send failed before reaching Telegram. */
  | { status: 'failed'; attempts: number; errorCode?: number; description: string }
  | { status: 'queued'; attempts: number; lastError: string; nextAttemptAt: number };

/**
 * The outbox's side of Redis: a send becomes durable (its record and its lane entry in
 * one script) and its record follows its attempts. The sends themselves ride the lane
 * engine (OUTBOX_ROUTE), so order per chat, retries and crash safety are the engine's.
 */
export class OutboxStore {
  constructor(
    private readonly ctx: QueueContext,
    private readonly scheduler: DrainScheduler,
    /** A drain job add that failed: the send is durable; the reconciler arms its lane again. */
    private readonly onScheduleError: (error: unknown) => void = () => undefined,
  ) {}

  /** `exists` when a send with this id is already there (nothing changes then). */
  async enqueue(send: OutboxSend, now = Date.now()): Promise<'queued' | 'exists'> {
    const { keys, redis } = this.ctx;
    const createdAt = send.createdAt ?? now;
    const lane = outboxLane(send.bot, send.chatId);
    const entry = encodeEntry({
      deliveryId: send.id,
      // Outbox sends carry no update; 0 keeps the entry format the engine reads.
      updateId: 0,
      bot: send.bot,
      route: OUTBOX_ROUTE,
      acceptedAt: createdAt,
      body: Buffer.from(JSON.stringify(send.call), 'utf8'),
    });
    const call = OUTBOX_ENQUEUE.encode(
      {
        record: keys.outboxSend(send.bot, send.id),
        lane: keys.lane(lane),
        laneState: keys.laneState(lane),
        routes: keys.routes,
        botStats: keys.botStats(send.bot),
        laneId: lane,
        entry,
        ttlMs: OUTBOX_RECORD_TTL_MS,
        client: send.client,
        method: send.call.method,
        chat: String(send.chatId),
        createdAt,
      },
      routePrefix(keys, OUTBOX_ROUTE, now),
    );
    const jobs = parseOutboxEnqueueReply(await redis.rgOutboxEnqueue(...call));
    if (!jobs) return 'exists';
    // The send is durable from here on: a failed add only delays it (the reconciler re-arms).
    await this.scheduler.add(jobs).catch((error: unknown) => this.onScheduleError(error));
    return 'queued';
  }

  async read(bot: string, id: string): Promise<OutboxRecord | undefined> {
    const hash = await this.ctx.redis.hgetall(this.ctx.keys.outboxSend(bot, id));
    if (!hash.status) return undefined;
    return recordOf(bot, id, hash);
  }

  /** Writes how an attempt ended; the record is kept OUTBOX_RECORD_TTL_MS from now. */
  async settle(
    bot: string,
    id: string,
    settlement: OutboxSettlement,
    now = Date.now(),
  ): Promise<void> {
    const key = this.ctx.keys.outboxSend(bot, id);
    const fields: (string | number)[] = [
      'status',
      settlement.status,
      'attempts',
      settlement.attempts,
      'updated',
      now,
    ];
    const drop: string[] = [];
    switch (settlement.status) {
      case 'sent':
        fields.push('result', settlement.result);
        if (settlement.migratedTo !== undefined) fields.push('migrated_to', settlement.migratedTo);
        drop.push('last_error', 'next_attempt');
        break;
      case 'failed':
        fields.push('description', settlement.description);
        if (settlement.errorCode !== undefined) fields.push('error_code', settlement.errorCode);
        drop.push('next_attempt');
        break;
      case 'queued':
        fields.push('last_error', settlement.lastError, 'next_attempt', settlement.nextAttemptAt);
        break;
    }
    // Records outlive every send (OUTBOX_MAX_AGE_MS < OUTBOX_RECORD_TTL_MS), so the
    // key is there unless deleted by hand.
    const multi = this.ctx.redis.multi().hset(key, ...fields);
    if (drop.length) multi.hdel(key, ...drop);
    multi.pexpire(key, OUTBOX_RECORD_TTL_MS);
    await multi.exec();
  }
}

/** The lane of a bot's sends to one chat. */
export function outboxLane(bot: string, chatId: number | string): string {
  return laneId(OUTBOX_ROUTE, bot, { kind: 'chat', chatId });
}

/** `params.chat_id` of a stored send's body, or undefined when it has none usable. */
export function outboxChatOf(body: Buffer): number | string | undefined {
  try {
    const call = JSON.parse(body.toString('utf8')) as Partial<OutboxCall>;
    const chatId = call.params?.chat_id;
    if (typeof chatId === 'number' && Number.isSafeInteger(chatId)) return chatId;
    if (typeof chatId === 'string' && chatId !== '') return chatId;
    return undefined;
  } catch {
    return undefined;
  }
}

function recordOf(bot: string, id: string, hash: Record<string, string>): OutboxRecord {
  const record: OutboxRecord = {
    id,
    bot,
    status: hash.status as OutboxStatus,
    client: hash.client ?? '',
    method: hash.method ?? '',
    chat: hash.chat ?? '',
    createdAt: Number(hash.created),
    updatedAt: Number(hash.updated ?? hash.created),
    attempts: Number(hash.attempts ?? 0),
  };
  if (hash.result !== undefined) record.result = hash.result;
  if (hash.error_code !== undefined) record.errorCode = Number(hash.error_code);
  if (hash.description !== undefined) record.description = hash.description;
  if (hash.last_error !== undefined) record.lastError = hash.last_error;
  if (hash.next_attempt !== undefined) record.nextAttemptAt = Number(hash.next_attempt);
  if (hash.migrated_to !== undefined) record.migratedTo = hash.migrated_to;
  return record;
}
