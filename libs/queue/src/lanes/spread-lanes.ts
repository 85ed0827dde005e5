import { NONE_LANE_SPREAD, laneId, parseLaneId } from '@relaygram/contracts';

/**
 * `none` ordering without a lane per delivery. Ingress names a lane of the delivery's
 * own (`<route>.<bot>.d<delivery id>`, from laneKeyFor); the store keeps it instead in
 * one of the route's NONE_LANE_SPREAD spread lanes (`...n<slot>`, picked by the delivery
 * id). A spread lane drains like any lane, one script per delivery; a delivery that
 * needs a retry is moved to its own lane (`LaneStore.detach`) and waits there alone,
 * so retries overtake and never hold back the others. With at least as many spread
 * lanes as a route can have worker slots, the route's concurrency is never capped.
 */
export function storedLane(lane: string): string {
  const { route, bot, key } = parseLaneId(lane);
  if (!key.startsWith('d')) return lane;
  return laneId(route, bot, { kind: 'spread', slot: spreadSlot(key.slice(1)) });
}

/** A spread lane: its failing heads move to lanes of their own instead of holding it. */
export function isSpreadLane(lane: string): boolean {
  return /^n\d+$/.test(parseLaneId(lane).key);
}

/** The lane of the delivery's own, where a retried head of a spread lane waits. */
export function ownLane(spreadLane: string, deliveryId: string): string {
  const { route, bot } = parseLaneId(spreadLane);
  return laneId(route, bot, { kind: 'single', deliveryId });
}

/** FNV-1a over the id: delivery ids are random UUIDs, so the slots fill evenly. */
function spreadSlot(deliveryId: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < deliveryId.length; i++) {
    hash ^= deliveryId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % NONE_LANE_SPREAD;
}
