import {
  BROADCAST_CHUNK,
  BROADCAST_LEASE_MS,
  BROADCAST_LOADING_STALE_MS,
  BROADCAST_LOADING_TTL_MS,
  BROADCAST_MAX_RECIPIENTS,
  BROADCAST_RECORD_TTL_MS,
  type BroadcastCall,
  type BroadcastFailureReason,
  type BroadcastStatus,
} from '@relaygram/contracts';
import type { QueueContext } from '../queue-context';
import {
  BROADCAST_APPEND,
  BROADCAST_CLAIM,
  BROADCAST_CONTROL,
  BROADCAST_CREATE,
  BROADCAST_SETTLE,
  BROADCAST_START,
} from '../scripts/broadcast.lua';

/**
 * A broadcast as it is created, before its recipients arrive. Its call comes at `start`:
 * a request body may name its recipients before its method.
 */
export interface BroadcastDraft {
  bot: string;
  client: string;
  /** Made by the caller, unique. */
  id: string;
  /**
   * Names the request that loads it (any unique string): its appends and its start
   * must give the same, so a request whose upload was started afresh by another (see
   * `create`) cannot add to the other's list.
   */
  upload: string;
  createdAt?: number;
}

/** What Redis keeps of one broadcast. */
export interface BroadcastRecord {
  id: string;
  bot: string;
  status: BroadcastStatus;
  client: string;
  method: string;
  /** The call's parameters, without `chat_id`, as JSON text. */
  params: string;
  total: number;
  sent: number;
  blocked: number;
  failed: number;
  createdAt: number;
  startedAt?: number;
  finishedAt?: number;
  /** Time spent running before the current stretch (ms), pauses left out. */
  runMs: number;
  /** A running broadcast: when its current stretch began. */
  runSince?: number;
  /** A paused broadcast that a dispatcher paused: why (an operator's pause has none). */
  pausedReason?: string;
}

/** A recipient a dispatcher claimed: its place in the list, its chat, and attempts before this one. */
export interface ClaimedRecipient {
  index: number;
  chatId: string;
  tries: number;
}

export type BroadcastClaim =
  | { status: 'running'; call: BroadcastCall; recipients: ClaimedRecipient[] }
  | { status: Exclude<BroadcastStatus, 'running'> | 'missing' };

/** How a claimed recipient's send ended. */
export type RecipientResult =
  | { index: number; outcome: 'sent' }
  | {
      index: number;
      outcome: BroadcastFailureReason;
      chatId: string;
      errorCode?: number;
      description: string;
    }
  /**
   * Send again once `dueAt` has come: `retry` counts a try (a 5xx, a network error:
   * the recipient fails after BROADCAST_MAX_ATTEMPTS of them), `wait` does not (a 429
   * or no pacing slot: the bot's limits, not the recipient's).
   */
  | { index: number; outcome: 'retry' | 'wait'; dueAt: number }
  /** Not sent (shutdown): claimable again at once, with no try counted. */
  | { index: number; outcome: 'release' };

/** One listed recipient that was not sent, and Telegram's answer. */
export interface BroadcastFailure {
  chat_id: string;
  error_code?: number;
  description: string;
}

export type BroadcastAction = 'pause' | 'resume' | 'cancel';

export type ControlResult =
  { ok: true; status: BroadcastStatus } | { ok: false; status: BroadcastStatus | 'missing' };

/**
 * A broadcast's side of Redis: created `loading`, filled with its recipients in chunks
 * as they stream in, started; then claimed in batches by dispatchers, settled, paused,
 * resumed or cancelled. Every change of state is one script (broadcast.lua.ts).
 */
export class BroadcastStore {
  constructor(private readonly ctx: QueueContext) {}

  /**
   * `created` (status `loading`), or the status of a broadcast with this id already
   * there. A loading one that got no recipients for BROADCAST_LOADING_STALE_MS lost its
   * upload: it is created afresh.
   */
  async create(draft: BroadcastDraft, now = Date.now()): Promise<'created' | BroadcastStatus> {
    const call = BROADCAST_CREATE.encode({
      meta: this.ctx.keys.broadcast(draft.bot, draft.id),
      recipients: this.ctx.keys.broadcastRecipients(draft.bot, draft.id),
      client: draft.client,
      createdAt: draft.createdAt ?? now,
      ttlMs: BROADCAST_LOADING_TTL_MS,
      staleMs: BROADCAST_LOADING_STALE_MS,
      upload: draft.upload,
    });
    return (await this.ctx.redis.rgBroadcastCreate(...call)) as 'created' | BroadcastStatus;
  }

  /**
   * Adds recipients (at most BROADCAST_CHUNK per call) to a loading broadcast of this
   * `upload` (its draft's); the total so far.
   */
  async append(
    bot: string,
    id: string,
    upload: string,
    chatIds: readonly string[],
    now = Date.now(),
  ): Promise<number> {
    if (chatIds.length === 0 || chatIds.length > BROADCAST_CHUNK) {
      throw new RangeError(`append takes 1 to ${BROADCAST_CHUNK} recipients`);
    }
    const call = BROADCAST_APPEND.encode(
      {
        meta: this.ctx.keys.broadcast(bot, id),
        recipients: this.ctx.keys.broadcastRecipients(bot, id),
        ttlMs: BROADCAST_LOADING_TTL_MS,
        max: BROADCAST_MAX_RECIPIENTS,
        now,
        upload,
      },
      undefined,
      { args: chatIds },
    );
    return Number(await this.ctx.redis.rgBroadcastAppend(...call));
  }

  /**
   * A loaded broadcast starts with its call: dispatchers see it. The status it has
   * after (`running`, or what it was when it was not loading), or `replaced` when its
   * upload was started afresh by another request.
   */
  async start(
    bot: string,
    id: string,
    upload: string,
    call: BroadcastCall,
    now = Date.now(),
  ): Promise<BroadcastStatus | 'missing' | 'replaced'> {
    const { keys } = this.ctx;
    const script = BROADCAST_START.encode({
      meta: keys.broadcast(bot, id),
      recipients: keys.broadcastRecipients(bot, id),
      index: keys.broadcasts(bot),
      running: keys.broadcastsRunning,
      now,
      member: memberOf(bot, id),
      id,
      method: call.method,
      params: JSON.stringify(call.params),
      upload,
    });
    return (await this.ctx.redis.rgBroadcastStart(...script)) as
      BroadcastStatus | 'missing' | 'replaced';
  }

  /** A broadcast whose upload failed: gone, so its id can be used again (if still this upload's). */
  async discard(bot: string, id: string, upload: string): Promise<void> {
    const { keys } = this.ctx;
    const meta = keys.broadcast(bot, id);
    const [status, owner] = await this.ctx.redis.hmget(meta, 'status', 'upload');
    if (status !== 'loading' || owner !== upload) return;
    // UNLINK: a refused upload may leave a list of a million ids.
    await this.ctx.redis.unlink(meta, keys.broadcastRecipients(bot, id));
  }

  async read(bot: string, id: string): Promise<BroadcastRecord | undefined> {
    const hash = await this.ctx.redis.hgetall(this.ctx.keys.broadcast(bot, id));
    if (!hash.status) return undefined;
    return recordOf(bot, id, hash);
  }

  /** A bot's broadcasts, newest first, `limit` of them from `offset`; gone ones pruned. */
  async list(bot: string, offset = 0, limit = 50): Promise<BroadcastRecord[]> {
    const index = this.ctx.keys.broadcasts(bot);
    const ids = await this.ctx.redis.zrevrange(index, offset, offset + limit - 1);
    const records = await Promise.all(ids.map((id) => this.read(bot, id)));
    const gone = ids.filter((_, i) => !records[i]);
    if (gone.length) await this.ctx.redis.zrem(index, ...gone);
    return records.filter((r): r is BroadcastRecord => r !== undefined);
  }

  async control(
    bot: string,
    id: string,
    action: BroadcastAction,
    now = Date.now(),
    reason = '',
  ): Promise<ControlResult> {
    const call = BROADCAST_CONTROL.encode({
      ...this.#keysOf(bot, id),
      action,
      now,
      member: memberOf(bot, id),
      ttlMs: BROADCAST_RECORD_TTL_MS,
      reason: action === 'pause' ? reason : '',
    });
    const [outcome, status] = (await this.ctx.redis.rgBroadcastControl(...call)) as [
      string,
      BroadcastStatus,
    ];
    if (outcome === 'ok') return { ok: true, status };
    return { ok: false, status: outcome === 'missing' ? 'missing' : status };
  }

  /** Recipients that ended with `reason`, in the order they did, and how many there are. */
  async failures(
    bot: string,
    id: string,
    reason: BroadcastFailureReason,
    offset: number,
    limit: number,
  ): Promise<{ total: number; items: BroadcastFailure[] }> {
    const key = this.ctx.keys.broadcastFailures(bot, id, reason);
    const [[, total], [, raw]] = (await this.ctx.redis
      .multi()
      .llen(key)
      .lrange(key, offset, offset + limit - 1)
      .exec()) as [[unknown, number], [unknown, string[]]];
    return { total, items: raw.map((item) => JSON.parse(item) as BroadcastFailure) };
  }

  /** The running broadcasts of every bot. */
  async running(): Promise<{ bot: string; id: string }[]> {
    const members = await this.ctx.redis.smembers(this.ctx.keys.broadcastsRunning);
    return members.flatMap((member) => {
      const slash = member.indexOf('/');
      return slash > 0 ? [{ bot: member.slice(0, slash), id: member.slice(slash + 1) }] : [];
    });
  }

  async claim(
    bot: string,
    id: string,
    max: number,
    now = Date.now(),
    leaseMs = BROADCAST_LEASE_MS,
  ): Promise<BroadcastClaim> {
    const call = BROADCAST_CLAIM.encode({
      ...this.#keysOf(bot, id),
      now,
      leaseMs,
      max,
      member: memberOf(bot, id),
      ttlMs: BROADCAST_RECORD_TTL_MS,
    });
    const reply = (await this.ctx.redis.rgBroadcastClaim(...call)) as string[];
    const status = reply[0] as BroadcastStatus | 'missing';
    if (status !== 'running') return { status };
    const recipients: ClaimedRecipient[] = [];
    for (let i = 3; i + 2 < reply.length; i += 3) {
      recipients.push({
        index: Number(reply[i]),
        chatId: reply[i + 1],
        tries: Number(reply[i + 2]),
      });
    }
    const params = JSON.parse(reply[2]) as Record<string, unknown>;
    return { status, call: { method: reply[1], params }, recipients };
  }

  /** Results of claimed recipients; how many counted (a claim taken over by another process is not). */
  async settle(
    bot: string,
    id: string,
    results: readonly RecipientResult[],
    now = Date.now(),
  ): Promise<number> {
    if (results.length === 0) return 0;
    const args: (string | number)[] = [];
    for (const result of results) {
      const due = result.outcome === 'retry' || result.outcome === 'wait' ? result.dueAt : 0;
      args.push(result.index, result.outcome, due);
      args.push(
        result.outcome === 'blocked' || result.outcome === 'failed' ? failureJson(result) : '',
      );
    }
    const call = BROADCAST_SETTLE.encode(
      {
        ...this.#keysOf(bot, id),
        now,
        member: memberOf(bot, id),
        ttlMs: BROADCAST_RECORD_TTL_MS,
      },
      undefined,
      { args },
    );
    return Number(await this.ctx.redis.rgBroadcastSettle(...call));
  }

  #keysOf(bot: string, id: string) {
    const { keys } = this.ctx;
    return {
      meta: keys.broadcast(bot, id),
      recipients: keys.broadcastRecipients(bot, id),
      claims: keys.broadcastClaims(bot, id),
      tries: keys.broadcastTries(bot, id),
      blocked: keys.broadcastFailures(bot, id, 'blocked'),
      failed: keys.broadcastFailures(bot, id, 'failed'),
      running: keys.broadcastsRunning,
    };
  }
}

function memberOf(bot: string, id: string): string {
  return `${bot}/${id}`;
}

function failureJson(result: { chatId: string; errorCode?: number; description: string }): string {
  const failure: BroadcastFailure = { chat_id: result.chatId, description: result.description };
  if (result.errorCode !== undefined) failure.error_code = result.errorCode;
  return JSON.stringify(failure);
}

function recordOf(bot: string, id: string, hash: Record<string, string>): BroadcastRecord {
  const record: BroadcastRecord = {
    id,
    bot,
    status: hash.status as BroadcastStatus,
    client: hash.client ?? '',
    method: hash.method ?? '',
    params: hash.params ?? '{}',
    total: Number(hash.total ?? 0),
    sent: Number(hash.sent ?? 0),
    blocked: Number(hash.blocked ?? 0),
    failed: Number(hash.failed ?? 0),
    createdAt: Number(hash.created),
    runMs: Number(hash.run_ms ?? 0),
  };
  if (hash.started !== undefined) record.startedAt = Number(hash.started);
  if (hash.finished !== undefined) record.finishedAt = Number(hash.finished);
  if (hash.run_since !== undefined) record.runSince = Number(hash.run_since);
  if (hash.paused_reason !== undefined) record.pausedReason = hash.paused_reason;
  return record;
}
