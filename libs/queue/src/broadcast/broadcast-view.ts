import type { BroadcastStatus } from '@relaygram/contracts';
import type { BroadcastRecord } from './broadcast-store';

/**
 * `GET /api/v1/:botId/broadcasts/:id`: a broadcast as its client reads it, and what
 * `relaygram broadcast show --json` prints.
 */
export interface BroadcastView {
  id: string;
  status: BroadcastStatus;
  method: string;
  total: number;
  sent: number;
  blocked: number;
  failed: number;
  /** Not sent yet; a cancelled broadcast's are never sent. */
  pending: number;
  /** Recipients settled per second while running (pauses left out); 0 before the first. */
  rate: number;
  created_at: string;
  started_at?: string;
  finished_at?: string;
  /** A running broadcast at its rate so far. */
  estimated_finish_at?: string;
  /**
   * A broadcast the dispatcher paused, and why: Telegram refused the bot's token (401),
   * so every send would fail. Resume once the token is fixed. An operator's pause has none.
   */
  paused_reason?: string;
}

export function broadcastView(record: BroadcastRecord, now = Date.now()): BroadcastView {
  const settled = record.sent + record.blocked + record.failed;
  const pending = Math.max(0, record.total - settled);
  const runMs =
    record.runMs + (record.runSince !== undefined ? Math.max(0, now - record.runSince) : 0);
  const rate = runMs > 0 ? settled / (runMs / 1000) : 0;
  const view: BroadcastView = {
    id: record.id,
    status: record.status,
    method: record.method,
    total: record.total,
    sent: record.sent,
    blocked: record.blocked,
    failed: record.failed,
    pending,
    rate: Math.round(rate * 10) / 10,
    created_at: new Date(record.createdAt).toISOString(),
  };
  if (record.startedAt !== undefined) view.started_at = new Date(record.startedAt).toISOString();
  if (record.finishedAt !== undefined) view.finished_at = new Date(record.finishedAt).toISOString();
  if (record.status === 'running' && rate > 0) {
    view.estimated_finish_at = new Date(now + (pending / rate) * 1000).toISOString();
  }
  if (record.status === 'paused' && record.pausedReason !== undefined) {
    view.paused_reason = record.pausedReason;
  }
  return view;
}
