import { runApp } from '@relaygram/observability';
import { StandaloneAppModule } from './app.module';

runApp({ service: 'standalone', module: (boot) => StandaloneAppModule.forRoot(boot) });
