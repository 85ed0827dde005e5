import type { Logger } from 'pino';

/**
 * The two lines operators search for, with one field set everywhere: `bot`,
 * `update_id`, `route`, `attempt`. Features write them through these helpers so the
 * names never drift apart.
 */
export interface UpdateReceivedLine {
  bot: string;
  update_id: number;
  source: 'webhook' | 'polling';
  /** queued | duplicate | ignored | rejected */
  outcome: string;
  deliveries: number;
  /** The routes that matched. */
  routes?: readonly string[];
}

export interface DeliveryOutcomeLine {
  route: string;
  bot: string;
  update_id: number;
  delivery_id: string;
  /** 1 for the first attempt. */
  attempt: number;
  /** delivered | retry | dead */
  outcome: string;
  /** The target's HTTP status; 0 for a network error or timeout. */
  status?: number;
  /** Duration of this attempt. */
  ms?: number;
  /** Dead letters: rejected | poison | expired | route_removed. */
  reason?: string;
  /** What went wrong, never a secret (no headers, no signing material). */
  error?: string;
  /** Retries: when the next attempt is due. */
  retry_in_ms?: number;
}

export function logUpdateReceived(logger: Logger, line: UpdateReceivedLine): void {
  logger.info({ event: 'update_received', ...line }, 'update received');
}

export function logDeliveryOutcome(logger: Logger, line: DeliveryOutcomeLine): void {
  const level = line.outcome === 'dead' ? 'error' : line.outcome === 'retry' ? 'warn' : 'info';
  logger[level]({ event: 'delivery', ...line }, `delivery ${line.outcome}`);
}
