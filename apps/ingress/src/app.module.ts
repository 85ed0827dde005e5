import { Module, type DynamicModule } from '@nestjs/common';
import { AdminModule } from '@relaygram/admin';
import { IngressModule } from '@relaygram/ingress';
import { CoreModule, type BootContext } from '@relaygram/platform';

@Module({})
export class IngressAppModule {
  static forRoot(boot: BootContext): DynamicModule {
    return {
      module: IngressAppModule,
      imports: [CoreModule.forRoot(boot), AdminModule, IngressModule],
    };
  }
}
