export * from './config.types';
export * from './outbound';
export * from './secret';
export * from './runtime-env';
export { parseFaultInjection, type FaultInjection } from './fault-injection';
export * from './loader';
export * from './config.service';
export * from './config.module';
export * from './redis-url';
