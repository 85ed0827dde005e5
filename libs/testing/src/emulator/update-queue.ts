import type { Update } from './emulator.types';

/** Telegram answers from the head of the queue when an offset is further ahead than this. */
const FUTURE_OFFSET_SLACK = 10;

/**
 * A bot's unconfirmed updates, after the Bot API server's queue: ids rise within the queue,
 * an offset confirms (forgets) every lower id, and confirmed updates are never seen again.
 * A Map keeps insertion order and O(1) deletes, which is all both readers need: getUpdates
 * takes from the head, the webhook pusher deletes what it delivered.
 */
export class UpdateQueue {
  private readonly entries = new Map<number, Update>();
  private nextId: number;
  private lastId: number | undefined;

  constructor(firstId: number) {
    this.nextId = firstId;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The id the next update will get. */
  get tail(): number {
    return this.nextId;
  }

  head(): number {
    for (const id of this.entries.keys()) return id;
    return this.nextId;
  }

  /**
   * After a quiet week Telegram starts ids at a random value, possibly lower than before;
   * that only happens with nothing pending, so ids still rise within the queue.
   */
  setNextId(id: number): void {
    this.assertRising(id);
    this.nextId = id;
  }

  /** Assigns the update its id (or checks the explicit one) and queues it. */
  push(update: Update, explicitId?: number): Update {
    const id = explicitId ?? this.nextId;
    this.assertRising(id);
    update.update_id = id;
    this.nextId = id + 1;
    this.lastId = id;
    this.entries.set(id, update);
    return update;
  }

  /** Gives an update an id without queueing it (filtered out by allowed_updates). */
  skip(update: Update, explicitId?: number): Update {
    const id = explicitId ?? this.nextId;
    this.assertRising(id);
    update.update_id = id;
    this.nextId = id + 1;
    return update;
  }

  /**
   * getUpdates' reading of `offset`: zero or negative counts from the end, anything below the
   * head starts at the head, an offset too far ahead is ignored (answered from the head
   * without confirming anything); otherwise every lower id is confirmed.
   * Returns the effective offset to wait on when nothing is there yet.
   */
  take(offset: number, limit: number): { updates: Update[]; offset: number } {
    let from = offset;
    const head = this.head();
    if (from <= 0) {
      if (from < 0 && this.entries.size > 0) from += this.nextId;
      if (from < head) from = head;
    }
    const effective = from;
    if (from > this.nextId + FUTURE_OFFSET_SLACK) from = head;
    this.forgetBelow(from);
    const updates: Update[] = [];
    for (const update of this.entries.values()) {
      if (updates.length >= limit) break;
      updates.push(update);
    }
    return { updates, offset: effective };
  }

  get(id: number): Update | undefined {
    return this.entries.get(id);
  }

  delete(id: number): void {
    this.entries.delete(id);
  }

  clear(): void {
    this.entries.clear();
  }

  values(): IterableIterator<Update> {
    return this.entries.values();
  }

  private forgetBelow(offset: number): void {
    for (const id of this.entries.keys()) {
      if (id >= offset) return;
      this.entries.delete(id);
    }
  }

  private assertRising(id: number): void {
    if (!Number.isSafeInteger(id) || id < 0) {
      throw new RangeError(`update_id must be a non-negative integer, got ${id}`);
    }
    if (this.entries.size > 0 && this.lastId !== undefined && id <= this.lastId) {
      throw new RangeError(
        `update_id ${id} is not above the last pending one (${this.lastId}); Telegram only restarts ids when nothing is pending`,
      );
    }
  }
}
