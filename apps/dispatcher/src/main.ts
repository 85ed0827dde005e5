import { runApp } from '@relaygram/platform';
import { DispatcherAppModule } from './app.module';

runApp({ service: 'dispatcher', module: (boot) => DispatcherAppModule.forRoot(boot) });
