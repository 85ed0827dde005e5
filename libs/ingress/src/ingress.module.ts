import { ConfigurableModuleBuilder, Module, type DynamicModule } from '@nestjs/common';
import { ConfigService } from '@relaygram/config';
import { replicaWaitFor } from '@relaygram/queue';
import { BotUsernames } from './bots/bot-usernames';
import { IngressBots } from './bots/ingress-bots';
import { IngressTelegramClients } from './bots/ingress-telegram';
import { IngressBotHealth } from './health/ingress-bot-health';
import {
  INGRESS_OPTIONS,
  resolveIngressOptions,
  type IngressOptionsInput,
} from './ingress.options';
import { UpdateIntake } from './intake/update-intake';
import { IngressConfigReload } from './lifecycle/ingress-config-reload';
import { RedisReadiness } from './lifecycle/redis-readiness';
import { PollingAdapter } from './polling/polling-adapter';
import { IngressStore } from './state/ingress-store';
import { ReplicaAcknowledger } from './state/replica-acknowledger';
import { WebhookManager } from './webhook/webhook-manager';
import { WebhookRoutes } from './webhook/webhook-routes';

const { ConfigurableModuleClass, MODULE_OPTIONS_TOKEN } =
  new ConfigurableModuleBuilder<IngressOptionsInput>().setClassMethodName('forRoot').build();

/**
 * The ingress feature: the webhook adapter, the polling adapter and webhook management,
 * run by `apps/ingress` and `apps/standalone`. It needs CoreModule (config, Redis store,
 * health, metrics, logger) beside it. Import it as it is for production timers, or with
 * `IngressModule.forRoot({...})` to change them (tests).
 */
@Module({
  providers: [
    {
      provide: INGRESS_OPTIONS,
      inject: [{ token: MODULE_OPTIONS_TOKEN, optional: true }],
      useFactory: (input?: IngressOptionsInput) => resolveIngressOptions(input),
    },
    RedisReadiness,
    IngressStore,
    {
      provide: ReplicaAcknowledger,
      inject: [IngressStore, ConfigService],
      // Settings read per call, so a reload changes them. On a cluster the WAIT goes to
      // the master of the prefix's slot: the hash tag puts every key of the install there.
      useFactory: (store: IngressStore, config: ConfigService) =>
        new ReplicaAcknowledger(replicaWaitFor(store.redis, store.keys.prefix), () => {
          const { waitReplicas, waitTimeoutMs } = config.config.redis;
          return { replicas: waitReplicas, timeoutMs: waitTimeoutMs };
        }),
    },
    IngressTelegramClients,
    IngressBots,
    BotUsernames,
    UpdateIntake,
    WebhookRoutes,
    PollingAdapter,
    WebhookManager,
    IngressBotHealth,
    IngressConfigReload,
  ],
  exports: [IngressBots, PollingAdapter, WebhookManager, IngressBotHealth, UpdateIntake],
})
export class IngressModule extends ConfigurableModuleClass {
  /** The options are optional: a test that changes nothing may still go through here. */
  static forRoot(options: IngressOptionsInput = {}): DynamicModule {
    return super.forRoot(options);
  }
}
