import { errorMessage } from '@relaygram/contracts';

type Handler = (params: never) => unknown;

interface Request {
  id: number;
  method: string;
  params: unknown;
}

/**
 * The child side of BenchChild: answers requests by method name, and runs `onStop`
 * then exits when the parent says so (SIGTERM) or disappears (IPC disconnect), so no
 * child outlives a bench that crashed.
 */
export function serveChild(
  handlers: Record<string, Handler>,
  onStop: () => Promise<void> | void = () => undefined,
): void {
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    const timer = setTimeout(() => process.exit(0), 5_000);
    timer.unref();
    Promise.resolve()
      .then(onStop)
      .catch(() => undefined)
      .finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', () => undefined);
  process.on('disconnect', stop);
  process.on('message', (message: Request) => {
    const handler = handlers[message.method];
    if (!handler) {
      process.send?.({ id: message.id, error: `no method ${message.method}` });
      return;
    }
    Promise.resolve()
      .then(() => handler(message.params as never))
      .then(
        (result) => process.send?.({ id: message.id, result }),
        (error: unknown) =>
          process.send?.({
            id: message.id,
            error: (error instanceof Error && error.stack) || errorMessage(error),
          }),
      );
  });
  process.send?.({ type: 'ready' });
}
