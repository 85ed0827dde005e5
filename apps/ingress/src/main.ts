import { Feature } from '@relaygram/contracts';
import { runApp } from '@relaygram/platform';
import { IngressAppModule } from './app.module';

runApp({ service: Feature.Ingress, module: (boot) => IngressAppModule.forRoot(boot) });
