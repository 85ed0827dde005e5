import { Module, type DynamicModule } from '@nestjs/common';
import { AdminModule } from '@relaygram/admin';
import { DispatcherModule } from '@relaygram/dispatcher';
import { GatewayModule } from '@relaygram/gateway';
import { IngressModule } from '@relaygram/ingress';
import { CoreModule, type BootContext } from '@relaygram/platform';

/** The three feature modules side by side in one process, for small installs. */
@Module({})
export class StandaloneAppModule {
  static forRoot(boot: BootContext): DynamicModule {
    return {
      module: StandaloneAppModule,
      imports: [
        CoreModule.forRoot(boot),
        AdminModule,
        IngressModule,
        DispatcherModule,
        GatewayModule,
      ],
    };
  }
}
