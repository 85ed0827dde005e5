export { DispatcherModule } from './dispatcher.module';
export { DISPATCHER_DEFAULTS, type DispatcherModuleOptions } from './dispatcher-options';
export {
  classifyAttempt,
  isExpired,
  type AttemptClass,
  type AttemptResult,
} from './delivery/attempt-classifier';
export { backoffDelay, parseRetryAfter, retryDelay, BACKOFF_BASE_MS } from './delivery/backoff';
export {
  buildDeliveryRequest,
  envelopeBody,
  prepareRoute,
  type DeliveryRequest,
  type PreparedRoute,
} from './delivery/delivery-request';
