import { Inject, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@relaygram/config';
import { RELAYGRAM_LOGGER } from '@relaygram/observability';
import type { Logger } from 'pino';
import { OutboundPacer } from './outbound-pacer';

/** Closes the pacer's Redis connection after the features stopped sending. */
@Injectable()
class PacerLifecycle implements OnApplicationShutdown {
  constructor(@Inject(OutboundPacer) private readonly pacer: OutboundPacer) {}

  async onApplicationShutdown(): Promise<void> {
    await this.pacer.close();
  }
}

/** The process's pacer, on a Redis connection of its own, logging through the process's logger. */
function connectPacer(config: ConfigService, logger: Logger): OutboundPacer {
  return OutboundPacer.connect(config.config.redis, {
    connectionName: `relaygram-${config.service}-pacing`,
    logger: logger.child({ component: 'pacing' }),
  });
}

/**
 * The process's one OutboundPacer, for every feature that calls Telegram (gateway,
 * dispatcher's webhook replies) and the admin page. It is a plain module: each feature
 * imports it and Nest makes one instance per app, so a process has one per-process
 * fallback budget whatever runs in it. It needs the global ConfigModule and logger.
 */
@Module({
  providers: [
    { provide: OutboundPacer, inject: [ConfigService, RELAYGRAM_LOGGER], useFactory: connectPacer },
    PacerLifecycle,
  ],
  exports: [OutboundPacer],
})
export class PacingModule {}
