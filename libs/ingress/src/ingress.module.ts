import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { BotUsernames } from './bots/bot-usernames';
import { IngressBots } from './bots/ingress-bots';
import { IngressTelegramShutdown, ingressTelegramProvider } from './bots/ingress-telegram';
import { IngressBotHealth } from './health/ingress-bot-health';
import {
  DEFAULT_INGRESS_OPTIONS,
  INGRESS_OPTIONS,
  resolveIngressOptions,
  type IngressOptionsInput,
} from './ingress.options';
import { UpdateIntake } from './intake/update-intake';
import { IngressConfigReload } from './lifecycle/ingress-config-reload';
import { RedisReadiness } from './lifecycle/redis-readiness';
import { PollingAdapter } from './polling/polling-adapter';
import { ingressRedisProvider } from './state/ingress-redis';
import { WebhookManager } from './webhook/webhook-manager';
import { WebhookRoutes } from './webhook/webhook-routes';

const PROVIDERS: Provider[] = [
  RedisReadiness,
  ingressRedisProvider,
  ingressTelegramProvider,
  IngressTelegramShutdown,
  IngressBots,
  BotUsernames,
  UpdateIntake,
  WebhookRoutes,
  PollingAdapter,
  WebhookManager,
  IngressBotHealth,
  IngressConfigReload,
];

const EXPORTS = [IngressBots, PollingAdapter, WebhookManager, IngressBotHealth, UpdateIntake];

/**
 * The ingress feature: the webhook adapter, the polling adapter and webhook management,
 * run by `apps/ingress` and `apps/standalone`. It needs CoreModule (config, Redis store,
 * health, metrics, logger) beside it. Import it as is for production timers, or through
 * `forRoot` to change them (tests).
 */
@Module({
  providers: [{ provide: INGRESS_OPTIONS, useValue: DEFAULT_INGRESS_OPTIONS }, ...PROVIDERS],
  exports: EXPORTS,
})
export class IngressModule {
  static forRoot(options: IngressOptionsInput = {}): DynamicModule {
    return {
      module: IngressModule,
      providers: [{ provide: INGRESS_OPTIONS, useValue: resolveIngressOptions(options) }],
    };
  }
}
