import { runApp } from '@relaygram/platform';
import { GATEWAY_APP } from './app.module';

runApp(GATEWAY_APP);
