import type { RelaygramMetrics } from '@relaygram/observability';
import type { ClaimedRecipient, RecipientResult } from '@relaygram/queue';
import {
  classifyBroadcastSend,
  type BroadcastCallResult,
  type BroadcastVerdict,
  type RetryReason,
} from './broadcast-classifier';
import type { ThrottledLog } from './throttled-log';

/** Why a broadcast was paused for a refused token, as its view and the admin page show it. */
export function haltReason(errorCode: number, description: string): string {
  return `Telegram refused the bot's token (${errorCode} ${description}): every send would fail. Fix the token, then resume.`;
}

/** A broadcast as the runner knows it. */
export interface BroadcastRef {
  bot: string;
  id: string;
}

type Outcome = 'sent' | 'blocked' | 'failed' | 'retry';

const LIMITS: ReadonlySet<RetryReason> = new Set(['too-many-requests', 'paced']);
type CounterChild = ReturnType<RelaygramMetrics['broadcastSends']['labels']>;

/** Pauses a broadcast whose every send would fail, saying why (BroadcastRunner does it). */
export type HaltBroadcast = (b: BroadcastRef, reason: string) => void;

/** A recipient whose bot has no Telegram client yet (a reload that failed) goes again this much later. */
const NO_CLIENT_RETRY_MS = 5_000;

/**
 * Telegram's answers to a broadcast's sends, turned into the results its store settles,
 * counted (`relaygram_broadcast_sends_total`) and logged: never a line per send, one per
 * broadcast and class of answer (blocked, a failure's code, a retry's reason) at most
 * every minute, with how many there were (ThrottledLog).
 */
export class BroadcastOutcomes {
  readonly #counters = new Map<string, CounterChild>();

  constructor(
    private readonly metrics: RelaygramMetrics,
    private readonly log: ThrottledLog,
    private readonly halt: HaltBroadcast,
  ) {}

  of(
    b: BroadcastRef,
    r: ClaimedRecipient,
    called: BroadcastCallResult,
    now = Date.now(),
  ): RecipientResult {
    const attempt = r.tries + 1;
    const verdict = classifyBroadcastSend(called, attempt);
    this.#count(b.bot, verdict.outcome);
    const key = `${b.bot}/${b.id}/`;
    const fields = { bot: b.bot, broadcast_id: b.id, attempt };
    switch (verdict.outcome) {
      case 'sent':
        return { index: r.index, outcome: 'sent' };
      case 'blocked': {
        const { errorCode, description } = verdict;
        this.log.info(
          `${key}blocked`,
          { ...fields, outcome: 'blocked', error_code: errorCode, description },
          'broadcast recipients blocked the bot',
        );
        return { index: r.index, outcome: 'blocked', chatId: r.chatId, errorCode, description };
      }
      case 'failed':
        return this.#failed(b, r, attempt, verdict.description, verdict.errorCode);
      case 'halt':
        this.halt(b, haltReason(verdict.errorCode, verdict.description));
        // Not the recipient's fault: claimable again, with no try counted, on resume.
        return { index: r.index, outcome: 'release' };
      case 'retry':
        this.log.warn(
          `${key}${verdict.reason}`,
          { ...fields, outcome: 'retry', error: verdict.error, retry_in_ms: verdict.delayMs },
          'broadcast sends not made, will retry',
        );
        return {
          index: r.index,
          // The bot's limits are no fault of the recipient's: they count no try.
          outcome: LIMITS.has(verdict.reason) ? 'wait' : 'retry',
          dueAt: now + verdict.delayMs,
        };
    }
  }

  /** The bot left the config: its recipients cannot be sent. */
  unconfigured(b: BroadcastRef, r: ClaimedRecipient): RecipientResult {
    this.#count(b.bot, 'failed');
    return this.#failed(b, r, r.tries + 1, 'the bot is no longer configured');
  }

  /** The bot has no Telegram client (a reloaded config could not be used): tried again later. */
  noClient(b: BroadcastRef, r: ClaimedRecipient, now = Date.now()): RecipientResult {
    this.#count(b.bot, 'retry');
    this.log.warn(
      `${b.bot}/${b.id}/no-client`,
      { bot: b.bot, broadcast_id: b.id, outcome: 'retry' },
      'broadcast sends wait: the bot has no Bot API client',
    );
    return { index: r.index, outcome: 'wait', dueAt: now + NO_CLIENT_RETRY_MS };
  }

  #failed(
    b: BroadcastRef,
    r: ClaimedRecipient,
    attempt: number,
    description: string,
    errorCode?: number,
  ): RecipientResult {
    this.log.warn(
      `${b.bot}/${b.id}/failed/${errorCode ?? description}`,
      {
        bot: b.bot,
        broadcast_id: b.id,
        attempt,
        outcome: 'failed',
        error_code: errorCode,
        description,
      },
      'broadcast sends failed',
    );
    return errorCode === undefined
      ? { index: r.index, outcome: 'failed', chatId: r.chatId, description }
      : { index: r.index, outcome: 'failed', chatId: r.chatId, errorCode, description };
  }

  #count(bot: string, verdict: BroadcastVerdict['outcome']): void {
    // A halted send goes again once the broadcast is resumed.
    const outcome: Outcome = verdict === 'halt' ? 'retry' : verdict;
    const key = `${bot}\n${outcome}`;
    let counter = this.#counters.get(key);
    if (!counter) {
      counter = this.metrics.broadcastSends.labels(bot, outcome);
      this.#counters.set(key, counter);
    }
    counter.inc();
  }
}
