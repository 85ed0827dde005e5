import { isManagementOnlyPath, startApp } from '@relaygram/platform';
import { describeApiDocuments } from '@relaygram/testing';
import { IngressAppModule } from '../src/app.module';

describeApiDocuments('ingress', {
  managementOnly: isManagementOnlyPath,
  start: (options) =>
    startApp(
      { service: 'ingress', module: (boot) => IngressAppModule.forRoot(boot) },
      { ...options, signals: false },
    ),
});
