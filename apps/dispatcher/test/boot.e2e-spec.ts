import { startApp } from '@relaygram/platform';
import { describeAppBoot } from '@relaygram/testing';
import { DispatcherAppModule } from '../src/app.module';

describeAppBoot('dispatcher', (options) =>
  startApp(
    { service: 'dispatcher', module: (boot) => DispatcherAppModule.forRoot(boot) },
    { ...options, signals: false },
  ),
);
