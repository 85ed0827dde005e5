import { Module } from '@nestjs/common';

/** The gateway feature: everything `apps/gateway` and `apps/standalone` run for it. */
@Module({})
export class GatewayModule {}
