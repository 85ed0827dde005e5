import { runApp } from '@relaygram/platform';
import { IngressAppModule } from './app.module';

runApp({ service: 'ingress', module: (boot) => IngressAppModule.forRoot(boot) });
