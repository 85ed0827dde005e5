import { isManagementOnlyPath, startApp } from '@relaygram/platform';
import { describeApiDocuments } from '@relaygram/testing';
import { StandaloneAppModule } from '../src/app.module';

describeApiDocuments('standalone', {
  managementOnly: isManagementOnlyPath,
  start: (options) =>
    startApp(
      { service: 'standalone', module: (boot) => StandaloneAppModule.forRoot(boot) },
      { ...options, signals: false },
    ),
});
