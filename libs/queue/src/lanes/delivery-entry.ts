/**
 * One delivery as stored in a lane: a one-line JSON header, a newline, then the update
 * bytes exactly as Telegram sent them (`format: update` delivers them unchanged).
 * The header starts with the delivery id so scripts can check a head by prefix.
 */
export interface DeliveryEntry {
  deliveryId: string;
  updateId: number;
  bot: string;
  route: string;
  /** When ingress accepted the update (ms since epoch): latency and max_age count from here. */
  acceptedAt: number;
  /** When a dead letter was re-sent (ms); max_age counts from here for a re-sent delivery. */
  replayedAt?: number;
  /** The update's raw bytes. */
  body: Buffer;
}

interface EntryHeader {
  d: string;
  u: number;
  b: string;
  r: string;
  t: number;
  p?: number;
}

const NEWLINE = 0x0a;

export function encodeEntry(entry: DeliveryEntry): Buffer {
  const header: EntryHeader = {
    d: entry.deliveryId,
    u: entry.updateId,
    b: entry.bot,
    r: entry.route,
    t: entry.acceptedAt,
  };
  if (entry.replayedAt !== undefined) header.p = entry.replayedAt;
  return Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`, 'utf8'), entry.body]);
}

export function decodeEntry(raw: Buffer): DeliveryEntry {
  const newline = raw.indexOf(NEWLINE);
  if (newline < 0) throw new Error('corrupt lane entry: no header line');
  const header = JSON.parse(raw.subarray(0, newline).toString('utf8')) as EntryHeader;
  if (
    typeof header.d !== 'string' ||
    typeof header.u !== 'number' ||
    typeof header.t !== 'number'
  ) {
    throw new Error('corrupt lane entry: bad header');
  }
  return {
    deliveryId: header.d,
    updateId: header.u,
    bot: header.b,
    route: header.r,
    acceptedAt: header.t,
    replayedAt: header.p,
    body: raw.subarray(newline + 1),
  };
}

/** The prefix every encoded entry of this delivery starts with (checked by the Lua scripts). */
export function entryPrefix(deliveryId: string): string {
  return `{"d":${JSON.stringify(deliveryId)}`;
}
