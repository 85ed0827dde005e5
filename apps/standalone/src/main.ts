import { STANDALONE_SERVICE } from '@relaygram/contracts';
import { resolve } from 'node:path';
import { runApp } from '@relaygram/platform';
import { StandaloneAppModule } from './app.module';
import { standaloneBanner } from './standalone-banner';

runApp(
  { service: STANDALONE_SERVICE, module: (boot) => StandaloneAppModule.forRoot(boot) },
  { banner: standaloneBanner, localRedis: { dataDir: resolve('data', 'redis') } },
);
