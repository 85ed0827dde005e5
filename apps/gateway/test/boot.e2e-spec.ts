import { startApp } from '@relaygram/platform';
import { describeAppBoot } from '@relaygram/testing';
import { GatewayAppModule } from '../src/app.module';

describeAppBoot('gateway', (options) =>
  startApp(
    { service: 'gateway', module: (boot) => GatewayAppModule.forRoot(boot) },
    { ...options, signals: false },
  ),
);
