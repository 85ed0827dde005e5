import { Feature } from '@relaygram/contracts';
import { runApp } from '@relaygram/platform';
import { DispatcherAppModule } from './app.module';

runApp({ service: Feature.Dispatcher, module: (boot) => DispatcherAppModule.forRoot(boot) });
