export * from './observability.module';
export * from './health/health-registry';
export * from './health/bot-status-reader';
export { webhookProblem, WEBHOOK_ERROR_WINDOW_MS } from './health/webhook-drift';
export * from './metrics/relaygram-metrics';
export * from './logging/logger';
export {
  currentRequestContext,
  requestIdFrom,
  runWithRequestContext,
  REQUEST_ID_HEADER,
  type RequestContext,
} from './logging/request-context';
export { withTimeout, TimeoutError } from './timeout';
export * from './health/pull-route-view';
export { BOT_STATUS_SCHEMA, ROUTE_FAILING_SCHEMA } from './health/health.docs';
export * from './health/failing-routes';
export * from './charts/minute-buckets';
export { MinuteStatsRecorder, MINUTE_STATS_FLUSH_MS } from './charts/minute-stats-recorder';
export { MinuteStatsReader, type MinuteCharts } from './charts/minute-stats-reader';
