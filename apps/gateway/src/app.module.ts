import { Module, type DynamicModule } from '@nestjs/common';
import { AdminModule } from '@relaygram/admin';
import { GatewayModule } from '@relaygram/gateway';
import { CoreModule, type BootContext } from '@relaygram/platform';

@Module({})
export class GatewayAppModule {
  static forRoot(boot: BootContext): DynamicModule {
    return {
      module: GatewayAppModule,
      imports: [CoreModule.forRoot(boot), AdminModule, GatewayModule],
    };
  }
}
