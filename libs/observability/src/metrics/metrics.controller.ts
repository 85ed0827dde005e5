import { Controller, Get, Header } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { routeConfig } from '@relaygram/openapi';
import { Registry } from 'prom-client';
import { RelaygramMetrics } from './relaygram-metrics';

/** Prometheus scrape endpoint; on the management listener only (see management-listener.ts). */
@Controller()
export class MetricsController {
  constructor(private readonly metrics: RelaygramMetrics) {}

  @Get('metrics')
  @RouteConfig(
    routeConfig({
      operationId: 'getMetrics',
      summary: 'Prometheus scrape endpoint',
      tags: ['metrics'],
      security: [],
      responses: {
        200: {
          description: 'The Prometheus text exposition',
          contentType: Registry.PROMETHEUS_CONTENT_TYPE,
          schema: { type: 'string' },
        },
      },
    }),
  )
  @Header('Content-Type', Registry.PROMETHEUS_CONTENT_TYPE)
  @Header('Cache-Control', 'no-store')
  scrape(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
