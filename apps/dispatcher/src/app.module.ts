import { Module, type DynamicModule } from '@nestjs/common';
import { AdminModule } from '@relaygram/admin';
import { DispatcherModule } from '@relaygram/dispatcher';
import { CoreModule, type BootContext } from '@relaygram/platform';

@Module({})
export class DispatcherAppModule {
  static forRoot(boot: BootContext): DynamicModule {
    return {
      module: DispatcherAppModule,
      imports: [CoreModule.forRoot(boot), AdminModule, DispatcherModule],
    };
  }
}
