import type { DeadLetter } from './dead-letter-store';
import { updateType, type Update } from '@relaygram/routing';

/**
 * A dead letter as the admin API and `relaygram dead list --json` show it: snake_case,
 * times as ISO strings, the update parsed.
 */
export interface DeadLetterView {
  delivery_id: string;
  route: string;
  bot: string;
  update_id: number;
  update_type: string | null;
  reason: string;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  /** Up to 1 KiB of the target's last answer. */
  last_body: string | null;
  accepted_at: string;
  dead_at: string;
  /** The update as received (parsed), or its text when it is not JSON. */
  update: unknown;
}

function parse(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return bytes.toString('utf8');
  }
}

export function deadLetterView(letter: DeadLetter): DeadLetterView {
  const update = parse(letter.update);
  const type = update && typeof update === 'object' ? (updateType(update as Update) ?? null) : null;
  return {
    delivery_id: letter.deliveryId,
    route: letter.route,
    bot: letter.bot,
    update_id: letter.updateId,
    update_type: type,
    reason: letter.reason,
    attempts: letter.attempts,
    last_status: letter.lastStatus ?? null,
    last_error: letter.lastError ?? null,
    last_body: letter.lastBody ?? null,
    accepted_at: new Date(letter.acceptedAt).toISOString(),
    dead_at: new Date(letter.deadAt).toISOString(),
    update,
  };
}
