import { Global, Module, type DynamicModule } from '@nestjs/common';
import type { Logger } from 'pino';
import type { RelaygramConfig } from './config.types';
import { ConfigService } from './config.service';
import type { RuntimeEnv, ServiceName } from './runtime-env';

export interface ConfigModuleOptions {
  config: RelaygramConfig;
  env: RuntimeEnv;
  service: ServiceName;
  /** The process logger (reload outcomes); a silent one when absent. */
  logger?: Logger;
}

/**
 * The loaded config for every module of an app. Apps load and validate it before Nest
 * starts (a bad file stops start-up with its problems listed), then pass it here.
 */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(options: ConfigModuleOptions): DynamicModule {
    return {
      module: ConfigModule,
      providers: [
        {
          provide: ConfigService,
          useValue: new ConfigService(options.config, options.env, options.service, options.logger),
        },
      ],
      exports: [ConfigService],
    };
  }
}
