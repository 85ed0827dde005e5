import { Module } from '@nestjs/common';

/** The dispatcher feature: everything `apps/dispatcher` and `apps/standalone` run for it. */
@Module({})
export class DispatcherModule {}
