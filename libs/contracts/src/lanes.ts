/**
 * A lane is the unit of order: deliveries in one lane go one at a time, in the order
 * ingress accepted them. Lane ids are `<route>.<bot>.<key>`; names are `[a-z0-9-]`,
 * so `.` separates them unambiguously, and ids carry no `:` (BullMQ job ids may not).
 */
export type LaneKey =
  | { kind: 'chat'; chatId: number | string }
  | { kind: 'user'; userId: number | string }
  | { kind: 'shared' }
  | { kind: 'single'; deliveryId: string }
  /**
   * One of a route's NONE_LANE_SPREAD lanes for `none` ordering, where the lane store
   * keeps single-delivery lanes until one needs a retry (libs/queue/README.md).
   */
  | { kind: 'spread'; slot: number };

/** How many spread lanes a (route, bot) has: at least the largest `concurrency` (1000). */
export const NONE_LANE_SPREAD = 1024;

export function laneId(route: string, bot: string, key: LaneKey): string {
  switch (key.kind) {
    case 'chat':
      return `${route}.${bot}.c${key.chatId}`;
    case 'user':
      return `${route}.${bot}.u${key.userId}`;
    case 'shared':
      return `${route}.${bot}.all`;
    case 'single':
      return `${route}.${bot}.d${key.deliveryId}`;
    case 'spread':
      return `${route}.${bot}.n${key.slot}`;
  }
}

export interface ParsedLaneId {
  route: string;
  bot: string;
  key: string;
}

export function parseLaneId(id: string): ParsedLaneId {
  const first = id.indexOf('.');
  const second = id.indexOf('.', first + 1);
  if (first <= 0 || second <= first + 1) throw new Error(`not a lane id: ${id}`);
  return { route: id.slice(0, first), bot: id.slice(first + 1, second), key: id.slice(second + 1) };
}

/** BullMQ job id of a lane's drain job under the engine before `drain` jobs (`drain-lane`). */
export function drainJobId(lane: string, gen: number): string {
  return `${lane}.${gen}`;
}

/**
 * Drain job ids: `d<n>` for a job armed to take ready lanes, `w<n>` for one that wakes
 * when a backing-off lane is due; n from the lane sequence, so ids never repeat (and
 * are never integers, which BullMQ refuses as custom ids).
 */
export const ARMED_JOB_PREFIX = 'd';
export const WAKE_JOB_PREFIX = 'w';
