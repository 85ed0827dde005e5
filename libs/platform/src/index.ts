export * from './app-definition';
export { startApp, runApp } from './start-app';
export { CoreModule } from './core.module';
export { BODY_LIMIT_BYTES, HTTP_DRAIN_MS } from './http-server';
export { SHUTDOWN_GRACE_MS } from './signals';
export { PUBLIC_DOCUMENT_PATH } from './api-documents';
export { isManagementOnlyPath } from './management-listener';
