import { Inject, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@relaygram/config';
import { OutboundPacer } from './outbound-pacer';

/** Closes the pacer's Redis connection after the features stopped sending. */
@Injectable()
class PacerLifecycle implements OnApplicationShutdown {
  constructor(@Inject(OutboundPacer) private readonly pacer: OutboundPacer) {}

  async onApplicationShutdown(): Promise<void> {
    await this.pacer.close();
  }
}

/**
 * The process's one OutboundPacer, for every feature that calls Telegram (gateway,
 * dispatcher's webhook replies) and the admin page. It is a plain module: each feature
 * imports it and Nest makes one instance per app, so a process has one per-process
 * fallback budget whatever runs in it. It needs the global ConfigModule.
 */
@Module({
  providers: [
    {
      provide: OutboundPacer,
      inject: [ConfigService],
      useFactory: (config: ConfigService) =>
        OutboundPacer.connect(config.config.redis, {
          connectionName: `relaygram-${config.service}-pacing`,
        }),
    },
    PacerLifecycle,
  ],
  exports: [OutboundPacer],
})
export class PacingModule {}
