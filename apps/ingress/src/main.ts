import { runApp } from '@relaygram/observability';
import { IngressAppModule } from './app.module';

runApp({ service: 'ingress', module: (boot) => IngressAppModule.forRoot(boot) });
