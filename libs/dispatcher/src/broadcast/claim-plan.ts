import { outboundOf, type BotConfig } from '@relaygram/config';
import { BROADCAST_CONCURRENCY } from '@relaygram/contracts';

/**
 * A bot's broadcasts hold at most this much of its broadcast budget in flight (claimed,
 * waiting for their slots, or sent): 24 recipients for a bot at the default 30/s x 0.8.
 */
export const CLAIM_AHEAD_MS = 1_000;

/**
 * `free` slots shared among `count` broadcasts as evenly as whole slots go; the ones
 * left over go to the broadcasts from `turn` on (modulo `count`), so with more
 * broadcasts than slots each gets its turn over the rounds.
 */
export function fairShares(free: number, count: number, turn: number): number[] {
  if (count <= 0) return [];
  const slots = Math.max(0, Math.floor(free));
  const base = Math.floor(slots / count);
  const extra = slots - base * count;
  const first = ((turn % count) + count) % count;
  return Array.from(
    { length: count },
    (_, i) => base + ((i - first + count) % count < extra ? 1 : 0),
  );
}

/**
 * A recipient's `chat_id` as the Bot API takes it: recipients are kept as text in Redis,
 * so a numeric id goes back to a number, and `@channelusername` (or anything else) stays
 * text. Ids beyond 2^53 stay text too, which Telegram accepts as well.
 */
export function chatIdOf(raw: string): number | string {
  if (!/^-?\d{1,16}$/.test(raw)) return raw;
  const id = Number(raw);
  return Number.isSafeInteger(id) ? id : raw;
}

/** A running broadcast that may claim: its bot, and its recipients in flight here. */
export interface ClaimCandidate {
  bot: string;
  held: number;
}

/**
 * How many recipients each running broadcast may claim now, out of `free` slots of
 * `total`. Each is entitled to an even part of `total` (the parts' remainder rotating
 * with `turn`), less what it holds: so a broadcast whose sends wait long for a slow
 * bot's pacing cannot pile up the slots a fast one frees, and starve it. Slots nobody's
 * part asks for go to any (in the same rotation), so none stay idle. Never beyond
 * `room`: what each bot may still hold, about a second of its broadcast budget.
 */
export function claimShares(
  free: number,
  total: number,
  candidates: readonly ClaimCandidate[],
  room: ReadonlyMap<string, number>,
  turn: number,
): number[] {
  const count = candidates.length;
  const grants = new Array<number>(count).fill(0);
  if (count === 0) return grants;
  const left = new Map(room);
  let remaining = Math.max(0, Math.floor(free));
  const give = (i: number, wanted: number): void => {
    const { bot } = candidates[i];
    const n = Math.min(wanted, remaining, left.get(bot) ?? 0);
    if (n <= 0) return;
    grants[i] += n;
    remaining -= n;
    left.set(bot, (left.get(bot) ?? 0) - n);
  };
  const parts = fairShares(total, count, turn);
  const first = ((turn % count) + count) % count;
  const order = Array.from({ length: count }, (_, k) => (first + k) % count);
  for (const i of order) give(i, parts[i] - candidates[i].held);
  for (const i of order) give(i, remaining);
  return grants;
}

/**
 * Recipients a bot's broadcasts may hold in flight: CLAIM_AHEAD_MS of its broadcast
 * budget, at least one (a share of 0 still claims one, which its pacing refuses), and
 * `max` when its pacing is off.
 */
export function claimAhead(bot: Pick<BotConfig, 'outbound'>, max: number): number {
  const outbound = outboundOf(bot);
  if (!outbound.enabled) return max;
  const perSecond = outbound.perSecond * outbound.broadcastShare;
  return Math.min(max, Math.max(1, Math.ceil((perSecond * CLAIM_AHEAD_MS) / 1_000)));
}

/**
 * claimShares for the running broadcasts `ready` (`bot/id` keys) of a process with
 * `inFlight` recipients: what each holds, and each bot's room from its config (a bot
 * no longer configured has all the free slots: its recipients fail at once).
 */
export function sharesOf(
  ready: readonly { bot: string; id: string }[],
  inFlight: Iterable<{ key: string; bot: string }>,
  bots: readonly BotConfig[],
  free: number,
  turn: number,
): number[] {
  const held = new Map<string, number>();
  const room = new Map<string, number>();
  for (const { key, bot } of inFlight) {
    held.set(key, (held.get(key) ?? 0) + 1);
    room.set(bot, (room.get(bot) ?? 0) - 1);
  }
  for (const bot of new Set(ready.map((b) => b.bot))) {
    const config = bots.find((candidate) => candidate.id === bot);
    const ahead = config ? claimAhead(config, BROADCAST_CONCURRENCY) : free;
    room.set(bot, (room.get(bot) ?? 0) + ahead);
  }
  const candidates = ready.map((b) => ({ bot: b.bot, held: held.get(`${b.bot}/${b.id}`) ?? 0 }));
  return claimShares(free, BROADCAST_CONCURRENCY, candidates, room, turn);
}
