import { runApp } from '@relaygram/platform';
import { GatewayAppModule } from './app.module';

runApp({ service: 'gateway', module: (boot) => GatewayAppModule.forRoot(boot) });
