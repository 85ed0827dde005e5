import { startApp } from '@relaygram/platform';
import { describeAppBoot } from '@relaygram/testing';
import { IngressAppModule } from '../src/app.module';

describeAppBoot('ingress', (options) =>
  startApp(
    { service: 'ingress', module: (boot) => IngressAppModule.forRoot(boot) },
    { ...options, signals: false },
  ),
);
