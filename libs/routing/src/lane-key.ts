import type { Ordering } from '@relaygram/config';
import type { LaneKey } from '@relaygram/contracts';
import { actorIdOf, chatIdOf, payloadOf, specOf, updateType } from './update-extractors';
import type { Update } from './update.types';

/**
 * The lane a delivery of this update joins on a route with this ordering (SPEC section
 * 5). `chat`: one lane per chat, else per user, else one shared lane (polls, unknown
 * types); `strict`: the route's one shared lane; `none`: a lane of its own, so retries
 * overtake. Ingress and the dead-letter re-send must agree, hence one function.
 */
export function laneKeyFor(ordering: Ordering, update: Update, deliveryId: string): LaneKey {
  switch (ordering) {
    case 'strict':
      return { kind: 'shared' };
    case 'none':
      return { kind: 'single', deliveryId };
    case 'chat':
      return chatLaneKey(update);
    default:
      return unknownOrdering(ordering);
  }
}

function chatLaneKey(update: Update): LaneKey {
  const type = updateType(update);
  const spec = specOf(type);
  const payload = type === undefined ? undefined : payloadOf(update, type);
  if (spec === undefined || payload === undefined) return { kind: 'shared' };
  const chatId = chatIdOf(spec, payload);
  if (chatId !== undefined) return { kind: 'chat', chatId };
  const userId = actorIdOf(spec, payload);
  if (userId !== undefined) return { kind: 'user', userId };
  return { kind: 'shared' };
}

function unknownOrdering(ordering: never): never {
  throw new Error(`unknown ordering: ${String(ordering)}`);
}
