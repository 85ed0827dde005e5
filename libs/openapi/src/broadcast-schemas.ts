import type { BroadcastStatus } from '@relaygram/contracts';
import type { JsonSchema } from './route-doc';

/** Every status, checked against the type: a new one fails to compile until listed. */
const STATUS_SET: Record<BroadcastStatus, true> = {
  loading: true,
  running: true,
  paused: true,
  cancelled: true,
  done: true,
};
const TIME: JsonSchema = { type: 'string', format: 'date-time' };
const COUNT: JsonSchema = { type: 'integer', minimum: 0 };

export const BROADCAST_STATUS: JsonSchema = Object.freeze({
  type: 'string',
  enum: Object.keys(STATUS_SET),
});

/**
 * A broadcast as `broadcastView` (libs/queue) shows it: to its client on the public
 * listener, and with its bot and client on the admin API.
 */
export const BROADCAST_VIEW: JsonSchema = Object.freeze({
  type: 'object',
  required: [
    'id',
    'status',
    'method',
    'total',
    'sent',
    'blocked',
    'failed',
    'pending',
    'rate',
    'created_at',
  ],
  properties: {
    id: { type: 'string', format: 'uuid' },
    status: BROADCAST_STATUS,
    method: { type: 'string', description: 'The Bot API method each recipient gets' },
    total: { ...COUNT, description: 'Recipients' },
    sent: COUNT,
    blocked: { ...COUNT, description: 'Telegram answered 403 (blocked, kicked, deactivated)' },
    failed: { ...COUNT, description: 'Any other refusal, or out of attempts' },
    pending: { ...COUNT, description: "Not sent yet; a cancelled broadcast's never are" },
    rate: {
      type: 'number',
      minimum: 0,
      description: 'Recipients settled per second while running (pauses left out)',
    },
    created_at: TIME,
    started_at: TIME,
    finished_at: { ...TIME, description: 'Done or cancelled' },
    estimated_finish_at: { ...TIME, description: 'A running broadcast, at its rate so far' },
    paused_reason: {
      type: 'string',
      description:
        "Why a dispatcher paused it: Telegram refused the bot's token (401), so every send would fail. Resume once the token is fixed. An operator's pause has none",
    },
  },
});

/** One recipient of `GET .../broadcasts/:id/failures`. */
export const BROADCAST_FAILURE: JsonSchema = Object.freeze({
  type: 'object',
  required: ['chat_id', 'description'],
  properties: {
    chat_id: { type: 'string' },
    error_code: { type: 'integer', description: "Telegram's; absent when none answered" },
    description: { type: 'string', description: "Telegram's description, or why" },
  },
});
