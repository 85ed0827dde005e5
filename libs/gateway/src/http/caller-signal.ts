import type { FastifyReply } from 'fastify';

/** The caller's signal, made only for the calls that wait (most never do). */
export type CallerSignal = () => AbortSignal;

/**
 * Aborted when the caller's connection closes before its answer: a wait for it ends.
 * Made on first use, and aborted at once if the caller is already gone by then.
 */
export function callerSignal(reply: FastifyReply): CallerSignal {
  let signal: AbortSignal | undefined;
  return () => {
    if (signal) return signal;
    const controller = new AbortController();
    signal = controller.signal;
    if (reply.raw.destroyed) {
      controller.abort();
      return signal;
    }
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) controller.abort();
    });
    return signal;
  };
}

export function callerGone(reply: FastifyReply): boolean {
  return reply.raw.destroyed || reply.raw.writableEnded;
}
