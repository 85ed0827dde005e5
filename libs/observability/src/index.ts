export * from './observability.module';
export * from './health/health-registry';
export * from './metrics/relaygram-metrics';
export * from './logging/logger';
export * from './bootstrap/run-app';
export { isManagementOnlyPath, MANAGEMENT_ONLY_PREFIXES } from './bootstrap/management-listener';
export * from './bootstrap/core.module';
