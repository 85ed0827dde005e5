import { Module } from '@nestjs/common';

/** The ingress feature: everything `apps/ingress` and `apps/standalone` run for it. */
@Module({})
export class IngressModule {}
