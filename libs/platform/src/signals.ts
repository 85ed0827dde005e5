import { ConfigService } from '@relaygram/config';
import type { RunningApp } from './app-definition';

/** Time given to in-flight work on SIGTERM before the process exits anyway. */
export const SHUTDOWN_GRACE_MS = 25_000;

/** SIGTERM and SIGINT close the app and exit; SIGHUP reloads the config file. */
export function installSignalHandlers(running: RunningApp): void {
  const log = running.logger.child({ context: 'Process' });
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log.info(`${signal}: finishing in-flight work, then exiting`);
    const timer = setTimeout(() => {
      log.error(`shutdown took longer than ${SHUTDOWN_GRACE_MS} ms; exiting`);
      process.exit(1);
    }, SHUTDOWN_GRACE_MS);
    timer.unref();
    running
      .close()
      .then(() => process.exit(0))
      .catch((error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.on('SIGHUP', () => {
    void running.app
      .get(ConfigService)
      .reload()
      .catch((error: unknown) => log.error({ err: error }, 'config reload failed'));
  });
}
