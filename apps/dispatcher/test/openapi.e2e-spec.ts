import { isManagementOnlyPath, startApp } from '@relaygram/platform';
import { describeApiDocuments } from '@relaygram/testing';
import { DispatcherAppModule } from '../src/app.module';

describeApiDocuments('dispatcher', {
  managementOnly: isManagementOnlyPath,
  start: (options) =>
    startApp(
      { service: 'dispatcher', module: (boot) => DispatcherAppModule.forRoot(boot) },
      { ...options, signals: false },
    ),
});
