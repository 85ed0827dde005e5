import { startApp } from '@relaygram/platform';
import { describeAppBoot } from '@relaygram/testing';
import { GATEWAY_APP } from '../src/app.module';

describeAppBoot('gateway', (options) => startApp(GATEWAY_APP, { ...options, signals: false }));
