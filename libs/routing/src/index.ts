export { UPDATE_TYPES, isKnownUpdateType, type Update, type UpdateType } from './update.types';
export { updateType, actorId, chatId, callbackData } from './update-extractors';
export { command } from './command-parser';
export { matches, type MatchContext } from './route-matcher';
export {
  isPullRoute,
  selectAllRoutes,
  selectRoutes,
  type AnyRoute,
  type SelectRoutesOptions,
} from './route-selector';
export { laneKeyFor } from './lane-key';
