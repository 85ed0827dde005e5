import { startApp } from '@relaygram/platform';
import { describeAppBoot } from '@relaygram/testing';
import { StandaloneAppModule } from '../src/app.module';

describeAppBoot('standalone', (options) =>
  startApp(
    { service: 'standalone', module: (boot) => StandaloneAppModule.forRoot(boot) },
    { ...options, signals: false },
  ),
);
