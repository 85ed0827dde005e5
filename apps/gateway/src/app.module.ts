import { Module, type DynamicModule } from '@nestjs/common';
import { AdminModule } from '@relaygram/admin';
import { GatewayModule } from '@relaygram/gateway';
import { Feature } from '@relaygram/contracts';
import { CoreModule, type AppDefinition, type BootContext } from '@relaygram/platform';

@Module({})
export class GatewayAppModule {
  static forRoot(boot: BootContext): DynamicModule {
    return {
      module: GatewayAppModule,
      imports: [CoreModule.forRoot(boot), AdminModule, GatewayModule],
    };
  }
}

/**
 * The gateway process. Its request lines name their `req_id` themselves, so it runs
 * without a per-request context (AppDefinition.requestContext): on Node 20 that context
 * hooks every promise, a measurable share of a proxied call.
 */
export const GATEWAY_APP: AppDefinition = {
  service: Feature.Gateway,
  module: (boot) => GatewayAppModule.forRoot(boot),
  requestContext: false,
};
