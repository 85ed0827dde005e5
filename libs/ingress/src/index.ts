export * from './ingress.module';
export {
  DEFAULT_INGRESS_OPTIONS,
  type IngressOptions,
  type IngressOptionsInput,
  type PollingOptions,
  type WebhookOptions,
} from './ingress.options';
export { IngressBots, type IngressBot, type IngressBotSet } from './bots/ingress-bots';
export { UpdateIntake } from './intake/update-intake';
export {
  parseUpdate,
  isUpdateId,
  updateIdProblem,
  type ParsedUpdate,
} from './intake/update-validation';
export { WebhookRoutes, WEBHOOK_PATH } from './webhook/webhook-routes';
export { WebhookManager } from './webhook/webhook-manager';
export { setWebhookParams, type WebhookInfo } from './webhook/webhook-settings';
export { assessWebhookInfo, type WebhookAssessment } from './health/bot-health-assessment';
export { IngressBotHealth } from './health/ingress-bot-health';
export { PollingAdapter, type LocalPoller } from './polling/polling-adapter';
