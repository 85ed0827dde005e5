import { runApp } from '@relaygram/observability';
import { GatewayAppModule } from './app.module';

runApp({ service: 'gateway', module: (boot) => GatewayAppModule.forRoot(boot) });
