import { runApp } from '@relaygram/observability';
import { DispatcherAppModule } from './app.module';

runApp({ service: 'dispatcher', module: (boot) => DispatcherAppModule.forRoot(boot) });
