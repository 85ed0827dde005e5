import { Feature } from '@relaygram/contracts';
import { runApp } from '@relaygram/platform';
import { GatewayAppModule } from './app.module';

runApp({ service: Feature.Gateway, module: (boot) => GatewayAppModule.forRoot(boot) });
