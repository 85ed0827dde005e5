/**
 * A realistic private-chat message update of about 600 bytes, as Telegram sends it
 * (user with names, username and language, a chat, a text with an entity). Every
 * request gets a fresh update_id; chats rotate so that `chat` ordering spreads the
 * load over many lanes, as a bot with many users does.
 */
export interface UpdateStream {
  /** First update_id of the stream. */
  firstId: number;
  /** Number of distinct chats (and users) the updates rotate over. */
  chats: number;
}

/** Chats every section's update stream rotates over: a bot with a thousand active users. */
export const BENCH_CHATS = 1000;

const FILLER =
  'Hi! I ordered the blue one last week and it has not arrived yet, could you check ' +
  'the tracking number? The app says it left the warehouse on Monday, nothing since.';

export function chatOf(stream: UpdateStream, updateId: number): number {
  return 100_000_000 + ((updateId - stream.firstId) % stream.chats);
}

/**
 * The update's JSON. `stamp` (a wall-clock time in ms with sub-ms digits) is put in the
 * text so the receiver can measure POST-to-receipt latency from the bytes it gets.
 */
export function updateJson(stream: UpdateStream, updateId: number, stamp?: number): string {
  const chat = chatOf(stream, updateId);
  const text = `${FILLER} #${updateId}${stamp === undefined ? '' : ` t=${stamp.toFixed(3)}`}`;
  return JSON.stringify({
    update_id: updateId,
    message: {
      message_id: 1000 + (updateId % 1_000_000),
      from: {
        id: chat,
        is_bot: false,
        first_name: 'Alexandra',
        last_name: 'Kowalczyk',
        username: `alex_k_${chat}`,
        language_code: 'en',
        is_premium: true,
      },
      chat: {
        id: chat,
        first_name: 'Alexandra',
        last_name: 'Kowalczyk',
        username: `alex_k_${chat}`,
        type: 'private',
      },
      date: 1_767_000_000 + (updateId % 86_400),
      text,
      entities: [{ offset: 0, length: 3, type: 'bold' }],
      link_preview_options: { is_disabled: true },
    },
  });
}

/** The stamp written by updateJson, or undefined. */
export function stampOf(body: string): number | undefined {
  const at = body.lastIndexOf(' t=');
  if (at < 0) return undefined;
  const value = Number.parseFloat(body.slice(at + 3));
  return Number.isFinite(value) ? value : undefined;
}

/** Wall-clock ms with sub-millisecond digits, comparable across processes of one machine. */
export function wallClockMs(): number {
  return performance.timeOrigin + performance.now();
}
