import { Global, Module, type DynamicModule } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { HealthController } from './health/health.controller';
import { HealthRegistry } from './health/health-registry';
import { BotStatusReader } from './health/bot-status-reader';
import { MinuteStatsReader } from './charts/minute-stats-reader';
import { MinuteStatsRecorder } from './charts/minute-stats-recorder';
import { MetricsController } from './metrics/metrics.controller';
import { QueueGaugeRefresher } from './metrics/queue-gauge-refresher';
import { RelaygramMetrics } from './metrics/relaygram-metrics';
import { RELAYGRAM_LOGGER } from '@relaygram/contracts';
import pino, { type Logger } from 'pino';

/** The process's pino logger, for structured lines (`{ bot, update_id, route }`). */
export { RELAYGRAM_LOGGER };

export interface ObservabilityModuleOptions {
  /** Reuse a metrics registry (tests boot several apps in one process). */
  metrics?: RelaygramMetrics;
  service?: string;
  /** The process logger; a silent one when absent (unit tests). */
  logger?: Logger;
}

/**
 * Health endpoints, /metrics, the readiness/bot-state registry and the metrics every
 * feature writes to. Needs the config and queue modules (the platform's CoreModule brings all three).
 */
@Global()
@Module({})
export class ObservabilityModule {
  static forRoot(options: ObservabilityModuleOptions = {}): DynamicModule {
    const metrics = options.metrics ?? new RelaygramMetrics({ service: options.service });
    return {
      module: ObservabilityModule,
      imports: [TerminusModule.forRoot({ logger: false })],
      controllers: [HealthController, MetricsController],
      providers: [
        HealthRegistry,
        BotStatusReader,
        QueueGaugeRefresher,
        MinuteStatsRecorder,
        MinuteStatsReader,
        { provide: RelaygramMetrics, useValue: metrics },
        { provide: RELAYGRAM_LOGGER, useValue: options.logger ?? pino({ level: 'silent' }) },
      ],
      exports: [
        HealthRegistry,
        BotStatusReader,
        RelaygramMetrics,
        RELAYGRAM_LOGGER,
        MinuteStatsRecorder,
        MinuteStatsReader,
      ],
    };
  }
}
