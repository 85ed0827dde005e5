import { isManagementOnlyPath, startApp } from '@relaygram/platform';
import { describeApiDocuments } from '@relaygram/testing';
import { GatewayAppModule } from '../src/app.module';

describeApiDocuments('gateway', {
  managementOnly: isManagementOnlyPath,
  start: (options) =>
    startApp(
      { service: 'gateway', module: (boot) => GatewayAppModule.forRoot(boot) },
      { ...options, signals: false },
    ),
});
