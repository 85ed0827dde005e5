import { pullRoutesOf, type RelaygramConfig } from '@relaygram/config';
import { OUTBOX_ROUTE } from '@relaygram/contracts';
import { laneKeyFor, type Update } from '@relaygram/routing';
import { outboxChatOf } from '../outbox/outbox-store';
import type { LaneResolver } from './dead-letter-store';

/**
 * Where a re-sent dead letter goes under this config: the lane the route's current
 * ordering gives the update, exactly as ingress would place it (one function,
 * `laneKeyFor`). Refused when the route is gone or no longer takes the bot's updates.
 * An outbox send goes back to its bot and chat's lane while the bot is configured.
 */
export function laneResolverFor(config: RelaygramConfig): LaneResolver {
  const routes = new Map(config.routes.map((route) => [route.name, route]));
  const pullRoutes = new Map(pullRoutesOf(config).map((route) => [route.name, route]));
  const bots = new Set(config.bots.map((bot) => bot.id));
  return (letter) => {
    if (letter.route === OUTBOX_ROUTE) {
      if (!bots.has(letter.bot)) return { error: `bot ${letter.bot} is no longer configured` };
      const chatId = outboxChatOf(letter.update);
      if (chatId === undefined) return { error: 'the stored send names no chat' };
      return { lane: { kind: 'chat', chatId } };
    }
    const pulled = pullRoutes.get(letter.route);
    if (pulled) {
      if (!pulled.bots.includes(letter.bot)) {
        return { error: `route ${letter.route} no longer takes updates from bot ${letter.bot}` };
      }
      return { lane: { kind: 'shared' }, pull: true };
    }
    const route = routes.get(letter.route);
    if (!route) return { error: `route ${letter.route} is no longer configured` };
    if (!route.bots.includes(letter.bot)) {
      return { error: `route ${letter.route} no longer takes updates from bot ${letter.bot}` };
    }
    let update: Update;
    try {
      update = JSON.parse(letter.update.toString('utf8')) as Update;
    } catch {
      return { error: 'the stored update is not JSON' };
    }
    return { lane: laneKeyFor(route.ordering, update, letter.deliveryId) };
  };
}
