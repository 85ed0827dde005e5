import { Controller, Get, Header } from '@nestjs/common';
import { Registry } from 'prom-client';
import { RelaygramMetrics } from './relaygram-metrics';

/** Prometheus scrape endpoint; on the management listener only (see management-listener.ts). */
@Controller()
export class MetricsController {
  constructor(private readonly metrics: RelaygramMetrics) {}

  @Get('metrics')
  @Header('Content-Type', Registry.PROMETHEUS_CONTENT_TYPE)
  @Header('Cache-Control', 'no-store')
  scrape(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
